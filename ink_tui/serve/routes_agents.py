"""Routes: a session's running sub-agents (`task` calls), stopped or steered one by one.

- `GET .../agents` -> `{"agents": [...]}`: the running ones (`AgentSession.agents`).
- `POST .../agents/{agent_id}/abort` -> once it has ended, `{"agent_id", "stop_reason",
  "result"}`; the run goes on (`POST .../abort` stops the whole tree).
- `POST .../agents/{agent_id}/messages` `{"text", "deliver_as"?}` (default "steer") ->
  202 `{"queued": {...}, "agent_id"}`: for that sub-agent's next model call (or, as a
  follow-up, for when it would stop).
- A sub-agent that is not running (ended, or never was): 404 `{"error": "gone"}`, with
  a message naming it; nothing was queued, so the client still has its text.
"""

from __future__ import annotations

from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ink_tui.control.subagents import AgentGone
from ink_tui.core.messages import QUEUE_MODES
from ink_tui.serve.responses import BadRequest, answer, choice, error, json_body, redactor_of
from ink_tui.serve.routes_sessions import served_of


async def get_agents(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    mask = redactor_of(request).text
    agents = [
        {
            **agent,
            "description": mask(agent["description"]),
            "queue": [mask(t) for t in agent["queue"]],
        }
        for agent in served.session.agents
    ]
    return answer(request, {"agents": agents})


async def abort_agent(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    try:
        # Not under the session's lock: waiting for its end must not hold up the rest.
        stopped = await served.session.abort_agent(request.path_params["agent_id"])
    except AgentGone as gone:
        return error(request, 404, "gone", str(gone))
    data = asdict(stopped)
    data["result"] = redactor_of(request).text(stopped.result)
    return answer(request, data)


async def post_agent_message(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    agent_id = request.path_params["agent_id"]
    try:
        body = await json_body(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BadRequest("`text` must be a non-empty string")
        deliver_as = choice(body, "deliver_as", QUEUE_MODES) or "steer"
    except BadRequest as bad:
        return error(request, 400, "bad_request", str(bad))
    session = served.session
    async with served.lock:
        try:
            if deliver_as == "steer":
                entry = session.steer(text, agent_id)
            else:
                entry = session.follow_up(text, agent_id)
        except AgentGone as gone:
            return error(request, 404, "gone", str(gone))
        except ValueError as bad:
            return error(request, 400, "bad_request", str(bad))
    return answer(request, {"queued": asdict(entry) if entry else None, "agent_id": agent_id}, 202)


routes = [
    Route("/api/sessions/{session_id}/agents", get_agents, methods=["GET"]),
    Route("/api/sessions/{session_id}/agents/{agent_id}/abort", abort_agent, methods=["POST"]),
    Route(
        "/api/sessions/{session_id}/agents/{agent_id}/messages",
        post_agent_message,
        methods=["POST"],
    ),
]
