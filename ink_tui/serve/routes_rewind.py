"""Routes: going back in a session (its tree, rewind, undo, moving, forking).

The operations of `AgentSession` (api/session_rewind.py; session/rewind.py says what
each does), as RPC has them:

- `GET .../tree` -> `{tree: [{id, parent_id, role, text, time, on_branch, ...}], leaf_id}`.
- `GET .../user-messages` -> `{messages: [{entry_id, text, kind, time, changed_files,
  has_checkpoint}]}`: what a rewind or a fork can go back to.
- `POST .../rewind/preview` `{entry_id}` -> `{entry_id, text, checkpoint, files}`.
- `POST .../rewind` `{entry_id, restore}` -> `{text, restored_files}`.
- `POST .../rewind/undo` -> `{restored_files}`.
- `POST .../tree/navigate` `{entry_id}` -> `{text, leaf_id}`.
- `POST .../fork` `{entry_id}` -> 201 `{session_id, text}`: the new session is open in
  this server, as `POST /api/sessions` with `resume` opens one.

What it promises:

- Every POST runs under the session's lock after a busy check: while a run is going it
  is 409 `busy` and nothing changes; a prompt sent meanwhile waits for the lock, so no
  run starts in the middle of a rewind. Reading the tree is allowed while busy.
- An entry id that is not in the session is 404 `not_found`; one that is not a user
  message, a missing or wrong `entry_id` or `restore`, 400 `bad_request`; any other
  refusal (another branch, nothing to undo, checkpoints off) 409 `refused`, its
  message saying why.
- Texts leave masked like the session's messages (`responses.answer`); a write / edit
  result in the tree (the diff) is cut to its first line unless tool arguments are
  shown, as in `messages` (`Redactor.result`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ink_tui.api.session import AgentSession
from ink_tui.serve.responses import BadRequest, answer, choice, error, json_body, redactor_of
from ink_tui.serve.routes_sessions import open_in_registry, served_of
from ink_tui.serve.sessions import ServedSession
from ink_tui.session.rewind import RESTORES, RewindRefused

BUSY = "a run is in progress: stop it (or wait for agent_settled), then go back"


def _entry_id(body: dict[str, Any]) -> str:
    value = body.get("entry_id")
    if not isinstance(value, str) or not value.strip():
        raise BadRequest("`entry_id` must be an entry id from the tree (a string)")
    return value.strip()


def _refused(request: Request, served: ServedSession, refused: RewindRefused) -> Response:
    """The answer for a refusal, by its kind (session/rewind.py)."""
    message = str(refused)
    if served.session.is_busy or refused.kind == "busy":
        return error(request, 409, "busy", message)
    if refused.kind == "not_found":
        return error(request, 404, "not_found", message)
    if refused.kind == "not_a_message":
        return error(request, 400, "bad_request", message)
    return error(request, 409, "refused", message)


def _tree_shown(request: Request, tree: dict[str, Any]) -> dict[str, Any]:
    redactor = redactor_of(request)
    items = []
    for item in tree["tree"]:
        if item.get("role") == "tool":
            item = {**item, "text": redactor.result(str(item.get("tool_name")), item["text"])}
        items.append(item)
    return {**tree, "tree": items}


async def get_tree(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    try:
        tree = await served.session.tree()
    except RewindRefused as refused:
        return _refused(request, served, refused)
    return answer(request, _tree_shown(request, tree))


async def user_messages(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    try:
        messages = await served.session.user_messages()
    except RewindRefused as refused:
        return _refused(request, served, refused)
    return answer(request, {"messages": messages})


# What a POST does once its body is read: the call to make on the session.
Act = Callable[[AgentSession], Awaitable[dict[str, Any]]]


async def _while_idle(
    request: Request, parse: Callable[[dict[str, Any]], Act]
) -> dict[str, Any] | Response:
    """The body read by `parse`, then, under the session's lock and only while it is
    idle, the call `parse` gave: its result, or the error answer to return."""
    served = served_of(request)
    if isinstance(served, Response):
        return served
    try:
        act = parse(await json_body(request))
    except BadRequest as bad:
        return error(request, 400, "bad_request", str(bad))
    async with served.lock:
        if served.session.is_busy:
            return error(request, 409, "busy", BUSY)
        try:
            return await act(served.session)
        except RewindRefused as refused:
            return _refused(request, served, refused)


def _done(request: Request, result: dict[str, Any] | Response) -> Response:
    return result if isinstance(result, Response) else answer(request, result)


async def preview(request: Request) -> Response:
    def parse(body: dict[str, Any]) -> Act:
        entry_id = _entry_id(body)
        return lambda session: session.rewind_preview(entry_id)

    return _done(request, await _while_idle(request, parse))


async def rewind(request: Request) -> Response:
    def parse(body: dict[str, Any]) -> Act:
        entry_id = _entry_id(body)
        restore = choice(body, "restore", RESTORES)
        if restore is None:
            raise BadRequest("`restore` must be 'conversation', 'files' or 'both'")
        return lambda session: session.rewind(entry_id, restore)

    return _done(request, await _while_idle(request, parse))


async def undo(request: Request) -> Response:
    return _done(request, await _while_idle(request, lambda body: _undo))


async def _undo(session: AgentSession) -> dict[str, Any]:
    return await session.undo_rewind()


async def navigate(request: Request) -> Response:
    def parse(body: dict[str, Any]) -> Act:
        entry_id = _entry_id(body)
        return lambda session: session.navigate_tree(entry_id)

    return _done(request, await _while_idle(request, parse))


async def fork(request: Request) -> Response:
    def parse(body: dict[str, Any]) -> Act:
        entry_id = _entry_id(body)
        return lambda session: session.fork(entry_id)

    forked = await _while_idle(request, parse)
    if isinstance(forked, Response):
        return forked
    # Opened outside the session's lock: this one is left as it was.
    return await _open_fork(request, forked)


async def _open_fork(request: Request, forked: dict[str, Any]) -> Response:
    """The forked session opened here, refused as `POST /api/sessions` refuses."""
    opening = await open_in_registry(request, forked["session_id"])
    if isinstance(opening, Response):
        return opening
    opened, _ = opening
    return answer(request, {"session_id": opened.id, "text": forked["text"]}, 201)


routes = [
    Route("/api/sessions/{session_id}/tree", get_tree, methods=["GET"]),
    Route("/api/sessions/{session_id}/user-messages", user_messages, methods=["GET"]),
    Route("/api/sessions/{session_id}/rewind/preview", preview, methods=["POST"]),
    Route("/api/sessions/{session_id}/rewind/undo", undo, methods=["POST"]),
    Route("/api/sessions/{session_id}/rewind", rewind, methods=["POST"]),
    Route("/api/sessions/{session_id}/tree/navigate", navigate, methods=["POST"]),
    Route("/api/sessions/{session_id}/fork", fork, methods=["POST"]),
]
