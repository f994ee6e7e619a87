"""Routes: list, open (new or resume), show and close sessions.

- `GET /api/sessions`: the sessions open here, then the workspace's saved ones.
- `POST /api/sessions` `{}` or `{"resume": "<id prefix>"}`: 201 and the state of the
  session opened; 200 when it was open here already. A session open in another process
  is 409 `locked`, an unknown id 404 `not_found`.
- `GET /api/sessions/{id}`: its state, messages and `subagents` (each sub-agent's events
  so far, compacted: `agent_log`; a resumed session's earlier ones from its file, with
  their conversations), for a page to draw the session as it is.
- `DELETE /api/sessions/{id}`: abort its run, close it (so `ink -r` can open it).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ink_tui.serve.responses import BadRequest, answer, error, json_body, optional_str
from ink_tui.serve.sessions import ServedSession, SessionRegistry


def registry_of(request: Request) -> SessionRegistry:
    registry: SessionRegistry = request.app.state.registry
    return registry


def served_of(request: Request) -> ServedSession | Response:
    """The session the path names, or the 404 answer to return."""
    session_id = request.path_params["session_id"]
    served = registry_of(request).get(session_id)
    if served is None:
        return error(
            request,
            404,
            "not_found",
            f"no session {session_id!r} is open here (POST /api/sessions to open one)",
        )
    return served


async def list_sessions(request: Request) -> Response:
    return answer(request, {"sessions": await registry_of(request).listing()})


async def open_session(request: Request) -> Response:
    try:
        body = await json_body(request)
        resume = optional_str(body, "resume")
        if resume is not None and not resume.strip():
            raise BadRequest("`resume` is empty: give the start of a session id")
    except BadRequest as bad:
        return error(request, 400, "bad_request", str(bad))
    opening = await open_in_registry(request, resume)
    if isinstance(opening, Response):
        return opening
    served, opened = opening
    return answer(request, {"session": served.state()}, 201 if opened else 200)


async def open_in_registry(
    request: Request, resume: str | None
) -> tuple[ServedSession, bool] | Response:
    """Open (or find) a session in the server's registry, or the refusal as an answer:
    held elsewhere 409, unknown 404, unreadable 422, the model's config or the store
    500, the server stopping 503 (also for a fork, routes_rewind.py)."""
    from ink_tui.api.session_open import ModelConfigError
    from ink_tui.serve.sessions import RegistryClosed
    from ink_tui.session.catalog import SessionLookupError
    from ink_tui.session.session_lock import SessionLocked
    from ink_tui.session.session_reader import SessionFileError

    try:
        return await registry_of(request).open(resume)
    except SessionLocked as locked:
        return error(request, 409, "locked", str(locked))
    except SessionLookupError as lookup:
        return error(request, 404, "not_found", str(lookup))
    except SessionFileError as unreadable:
        return error(request, 422, "unreadable", str(unreadable))
    except ModelConfigError as config:
        return error(request, 500, "config", str(config))
    except RegistryClosed as stopping:
        return error(request, 503, "stopping", str(stopping))
    except OSError as store:
        return error(request, 500, "store", str(store))


async def show_session(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    return answer(
        request,
        {
            "session": served.state(),
            "messages": served.messages(),
            "subagents": served.subagents(),
        },
    )


async def close_session(request: Request) -> Response:
    served = served_of(request)
    if isinstance(served, Response):
        return served
    await registry_of(request).close(served)
    return answer(request, {"closed": True, "session_id": served.id})


routes = [
    Route("/api/sessions", list_sessions, methods=["GET"]),
    Route("/api/sessions", open_session, methods=["POST"]),
    Route("/api/sessions/{session_id}", show_session, methods=["GET"]),
    Route("/api/sessions/{session_id}", close_session, methods=["DELETE"]),
]
