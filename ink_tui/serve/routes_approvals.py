"""Route: answer a session's approval question (an `approval_request` event).

`POST /api/sessions/{id}/approvals/{request_id}` `{"decision", "reason"?}`, with the
decision words of RPC's `approve`: "allow" (once), "session" (this tool, or this
command prefix, for the rest of the session), "always" (saved as a rule in the
workspace's .ink/config.toml) or "deny" (`reason` is what the model reads).

- 200 `{"request_id", "decision"}`: the call runs (or is refused) at once.
- An answer counts once: a question answered already, or closed by an abort, is 409
  `answered` saying how it ended; an id never asked here is 404 `not_found`; a
  decision that is not one of the four (or one the question does not offer: a
  command with shell syntax only offers "allow" and "deny") is 400 `bad_request`.

The questions open now are in the session's state (`approvals`, as their events).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ink_tui.control.approvals import DECISIONS, AnswerError
from ink_tui.serve.responses import BadRequest, answer, error, json_body, optional_str
from ink_tui.serve.routes_sessions import served_of


async def answer_approval(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    request_id = request.path_params["request_id"]
    try:
        body = await json_body(request)
        decision = body.get("decision")
        if decision not in DECISIONS:
            raise BadRequest("`decision` must be " + ", ".join(repr(d) for d in DECISIONS))
        reason = optional_str(body, "reason")
    except BadRequest as bad:
        return error(request, 400, "bad_request", str(bad))
    asked = served.approvals.get(request_id)
    if asked is None:
        before = served.answered.get(request_id)
        if before is not None:
            return _answered(request, request_id, before)
        return error(
            request, 404, "not_found", f"no approval question {request_id!r} in this session"
        )
    offered = asked.get("decisions") or DECISIONS
    if decision not in offered:
        return error(
            request,
            400,
            "bad_request",
            f"this question offers {', '.join(offered)} (the command cannot become a rule)",
        )
    try:
        served.session.answer_approval(request_id, decision, reason)
    except AnswerError:
        # Answered (or closed by an abort) between the look-up and now.
        return _answered(request, request_id, served.answered.get(request_id, "answered"))
    return answer(request, {"request_id": request_id, "decision": decision})


def _answered(request: Request, request_id: str, how: str) -> Response:
    return error(
        request,
        409,
        "answered",
        f"approval {request_id} was already answered ({how}); this answer is ignored",
    )


routes = [
    Route("/api/sessions/{session_id}/approvals/{request_id}", answer_approval, methods=["POST"]),
]
