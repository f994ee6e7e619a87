"""Route: `GET /api/sessions/{id}/events`, the session's public events over SSE.

The stream's rules (ids, replay with `Last-Event-ID` or `?last_event_id=`, the
`replay_gap` event, merged deltas) are `events_stream`'s. Without a last event id the
stream starts with the next event: load the state first (`GET /api/sessions/{id}`),
then listen from its `last_seq`. A keep-alive comment after `PING_S` quiet seconds; a client
that hangs up only stops its own stream (the run goes on).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ink_tui.serve.events_stream import sse_stream
from ink_tui.serve.responses import error, redactor_of
from ink_tui.serve.routes_sessions import served_of
from ink_tui.serve.sse_response import SSEResponse

PING_S = 15


def _last_event_id(request: Request) -> int | str | None:
    """The id to replay after, None for none, or the message for a bad one."""
    raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        return f"Last-Event-ID {raw!r} is not an event id (a number)"
    return value if value >= 0 else "Last-Event-ID cannot be negative"


async def events(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    after = _last_event_id(request)
    if isinstance(after, str):
        return error(request, 400, "bad_request", after)
    listener = served.log.listen(after)
    return SSEResponse(
        sse_stream(served.log, listener, mask=redactor_of(request).text),
        ping_s=PING_S,
    )


routes = [Route("/api/sessions/{session_id}/events", events, methods=["GET"])]
