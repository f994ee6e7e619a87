"""Routes: a session's queue, by entry id (ids stay valid while entries move).

- `GET .../queue` -> `{"entries": [...]}`; `DELETE .../queue` -> `{"removed": [...]}`
  (taken out: nothing goes back to anyone's editor).
- `PATCH .../queue/{entry_id}` `{"text"?, "mode"?, "position"?}` -> `{"entries": [...]}`.
- `DELETE .../queue/{entry_id}` -> `{"removed": {...}}`.
- An entry that was sent or removed meanwhile: 404 `{"error": "gone"}`; nothing else
  changes.

Edits run under the session's lock, so a PATCH's text, mode and position apply
together, never interleaved with another request's.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ink_tui.api.session import QueueEntryGone
from ink_tui.core.messages import QUEUE_MODES
from ink_tui.serve.responses import BadRequest, answer, choice, error, json_body, optional_str
from ink_tui.serve.routes_sessions import served_of


def _entry_id(request: Request) -> int:
    raw = request.path_params["entry_id"]
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"entry id {raw!r} is not a number") from None


def _position(body: dict[str, Any]) -> int | None:
    value = body.get("position")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise BadRequest("`position` must be an integer (0 is first)")
    return value


async def get_queue(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    return answer(request, {"entries": served.queue()})


async def clear_queue(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    async with served.lock:
        removed = served.session.clear_queue()
    return answer(request, {"removed": [asdict(e) for e in removed]})


async def patch_entry(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    try:
        entry_id = _entry_id(request)
        body = await json_body(request)
        text = optional_str(body, "text")
        mode = choice(body, "mode", QUEUE_MODES)
        position = _position(body)
        if text is None and mode is None and position is None:
            raise BadRequest("give `text`, `mode` or `position`")
        if text is not None and not text.strip():
            raise BadRequest("`text` is empty: remove the entry instead")
    except BadRequest as bad:
        return error(request, 400, "bad_request", str(bad))
    session = served.session
    async with served.lock:
        try:
            if text is not None:
                session.edit(entry_id, text)
            if mode is not None:
                session.set_mode(entry_id, mode)
            if position is not None:
                session.move(entry_id, position)
        except QueueEntryGone as gone:
            return error(request, 404, "gone", str(gone))
    return answer(request, {"entries": served.queue()})


async def delete_entry(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    try:
        entry_id = _entry_id(request)
    except BadRequest as bad:
        return error(request, 400, "bad_request", str(bad))
    async with served.lock:
        try:
            removed = served.session.remove(entry_id)
        except QueueEntryGone as gone:
            return error(request, 404, "gone", str(gone))
    return answer(request, {"removed": asdict(removed)})


routes = [
    Route("/api/sessions/{session_id}/queue", get_queue, methods=["GET"]),
    Route("/api/sessions/{session_id}/queue", clear_queue, methods=["DELETE"]),
    Route("/api/sessions/{session_id}/queue/{entry_id}", patch_entry, methods=["PATCH"]),
    Route("/api/sessions/{session_id}/queue/{entry_id}", delete_entry, methods=["DELETE"]),
]
