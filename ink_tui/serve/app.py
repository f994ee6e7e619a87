"""The Starlette app of `ink serve`: routes, the token check, the page and its assets.

What it promises:

- Every route, the page and its assets included, is behind `TokenAuth` (401 without
  the token), and behind `guard`'s checks: the Host header, where a cookie-borne change
  comes from, the body's type and size, and the security headers on every answer.
- Every answer is JSON, errors too (`{"error": code, "message"}`), masked by the
  server's `Redactor`; an unknown route is 404 `not_found`, an unexpected failure 500
  `internal` (logged here, masked there).
- `GET /` is `static/index.html`; `/static/...` the files beside it (shipped in the
  package: no build step, no CDN); `/favicon.ico`, which browsers ask for whatever the
  page names, the page's icon (`static/favicon.svg`).
- On shutdown every session is closed: runs aborted and settled, files closed, locks
  released.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ink_tui.serve import (
    routes_agents,
    routes_approvals,
    routes_events,
    routes_messages,
    routes_queue,
    routes_rewind,
    routes_sessions,
)
from ink_tui.serve.auth import TokenAuth
from ink_tui.serve.guard import MAX_BODY, SameOrigin, Shield
from ink_tui.serve.json_response import StrictJSONResponse
from ink_tui.serve.redact import Redactor
from ink_tui.serve.sessions import SessionRegistry

log = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")


async def index(request: Request) -> Response:
    page = STATIC / "index.html"
    if not page.is_file():
        return StrictJSONResponse(
            {"error": "not_found", "message": "the page is not installed"}, 404
        )
    return FileResponse(page, headers={"Cache-Control": "no-store"})


async def favicon(request: Request) -> Response:
    icon = STATIC / "favicon.svg"
    if not icon.is_file():
        return StrictJSONResponse(
            {"error": "not_found", "message": "the icon is not installed"}, 404
        )
    return FileResponse(icon, media_type="image/svg+xml")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    body = {"error": codes.get(exc.status_code, "http_error"), "message": str(exc.detail)}
    return StrictJSONResponse(body, exc.status_code, headers=exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    redactor: Redactor = request.app.state.redactor
    body = {"error": "internal", "message": redactor.text(f"{type(exc).__name__}: {exc}")}
    return StrictJSONResponse(body, 500)


def build_app(
    registry: SessionRegistry,
    token: str,
    *,
    allow_remote: bool = False,
    public_origins: tuple[str, ...] = (),
    max_body: int = MAX_BODY,
) -> Starlette:
    """The app; `allow_remote` drops the Host check (`--allow-remote`), `public_origins`
    are the addresses a proxy in front serves the page at (`--public-origin`)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await registry.aclose()

    routes: list[Any] = [
        Route("/", index, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        *routes_sessions.routes,
        *routes_messages.routes,
        *routes_queue.routes,
        *routes_agents.routes,
        *routes_approvals.routes,
        *routes_rewind.routes,
        *routes_events.routes,
        Mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static"),
    ]
    app = Starlette(
        routes=routes,
        # Outermost first: headers and Host for every answer, then the token, then the
        # checks that need to know how the request passed it.
        middleware=[
            Middleware(Shield, allow_remote=allow_remote, public_origins=public_origins),
            Middleware(TokenAuth, token=token),
            Middleware(
                SameOrigin,
                allow_remote=allow_remote,
                public_origins=public_origins,
                max_body=max_body,
            ),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
        lifespan=lifespan,
    )
    app.state.registry = registry
    app.state.redactor = registry.redactor
    return app
