"""Routes: send a message to a session, abort its run.

`POST /api/sessions/{id}/messages` `{"text", "deliver_as"?}` follows the rule every
front end shares (docs/serve.md):

- idle: the text starts a run, 202 `{"started": true}`;
- busy without `deliver_as`: 429 `{"error": "busy"}` with `Retry-After: 1`, nothing
  queued;
- busy with `deliver_as` "steer" | "follow_up": queued exactly as the TUI queues Enter
  and Alt+Enter, 202 `{"queued": {id, text, mode}}`.

The check and the start (or queueing) happen under the session's own lock, so of many
concurrent requests exactly one starts a run. With `?wait=settled` a started run is tied
to the connection: the answer is an SSE stream of the run's events that ends with
`agent_settled`, and if the client hangs up first, the run is aborted (the same chain as
Ctrl+C: HTTP stream to the model closed, tool process groups killed).

`POST /api/sessions/{id}/abort` answers once the run has settled: `{"aborted", ...}`
with how it settled.
"""

from __future__ import annotations

from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ink_tui.core.messages import QUEUE_MODES
from ink_tui.serve.events_stream import sse_stream
from ink_tui.serve.responses import BadRequest, answer, choice, error, json_body, redactor_of
from ink_tui.serve.routes_sessions import registry_of, served_of
from ink_tui.serve.sse_response import SSEResponse

PING_S = 15


async def post_message(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    try:
        body = await json_body(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BadRequest("`text` must be a non-empty string")
        deliver_as = choice(body, "deliver_as", QUEUE_MODES)
    except BadRequest as bad:
        return error(request, 400, "bad_request", str(bad))
    wait = request.query_params.get("wait")
    if wait not in (None, "settled"):
        return error(request, 400, "bad_request", "`wait` can only be 'settled'")

    session = served.session
    async with served.lock:
        if session.is_busy:
            if deliver_as is None:
                return error(
                    request,
                    429,
                    "busy",
                    "a run is in progress: send deliver_as 'steer' or 'follow_up' to queue "
                    "the message, or wait for agent_settled",
                    headers={"Retry-After": "1"},
                )
            entry = session.steer(text) if deliver_as == "steer" else session.follow_up(text)
            return answer(request, {"queued": asdict(entry) if entry else None}, 202)
        # Idle: the text starts a run, whatever `deliver_as` said. Listening starts
        # before the run does, so the stream misses none of its events.
        listener = served.log.listen(served.log.last_seq) if wait else None
        try:
            session.start(text)
        except ValueError as bad:
            if listener is not None:
                served.log.forget(listener)
            return error(request, 400, "bad_request", str(bad))
    if listener is None:
        return answer(request, {"started": True}, 202)

    registry = registry_of(request)

    def hang_up() -> None:
        registry.background(session.abort(), f"abort of session {served.id} after a hang-up")

    return SSEResponse(
        sse_stream(
            served.log,
            listener,
            mask=redactor_of(request).text,
            until_settled=True,
            on_hang_up=hang_up,
        ),
        ping_s=PING_S,
    )


async def abort(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    # Not under the session's lock: waiting for the settle must not hold up queue edits
    # or a steer meanwhile (the controller takes them in its own order).
    result = await served.session.abort()
    data = {"aborted": result is not None, **(asdict(result) if result is not None else {})}
    return answer(request, data)


routes = [
    Route("/api/sessions/{session_id}/messages", post_message, methods=["POST"]),
    Route("/api/sessions/{session_id}/abort", abort, methods=["POST"]),
]
