"""The access token: every request of `ink serve` needs it, or gets 401.

What it promises:

- A request passes with `Authorization: Bearer <token>`, with the `ink_token` cookie,
  or with `?token=<token>` in its URL (the link `ink serve` prints). The last sets the
  cookie (HttpOnly: page scripts never see it; SameSite=Strict: other sites cannot
  send it), so the page and its EventSource, which cannot send headers, go on with it.
- Anything else gets `401 {"error": "unauthorized"}`, on every route: the page, the
  assets, the API. Tokens are compared in constant time.
- How a request passed is left in its scope (`AUTH_KEY`: "token" for the header or the
  link, "cookie" for the cookie alone): a browser sends the cookie with requests other
  pages make, so `guard.SameOrigin` checks where those come from.
"""

from __future__ import annotations

import json
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "ink_token"
AUTH_KEY = "ink.auth"


def new_token() -> str:
    return secrets.token_urlsafe(24)


class TokenAuth:
    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
        elif self._from_query(scope) and scope["type"] == "http":
            scope[AUTH_KEY] = "token"
            await self.app(scope, receive, self._setting_cookie(send))
        elif self._from_query(scope) or self._from_header(scope):
            scope[AUTH_KEY] = "token"
            await self.app(scope, receive, send)
        elif self._from_cookie(scope):
            scope[AUTH_KEY] = "cookie"
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await _unauthorized(send)
        else:
            await send({"type": "websocket.close", "code": 1008})

    def _valid(self, candidate: str | bytes | None) -> bool:
        if not candidate:
            return False
        if isinstance(candidate, str):
            candidate = candidate.encode()
        return secrets.compare_digest(candidate, self._token)

    def _from_query(self, scope: Scope) -> bool:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        return any(self._valid(value) for value in query.get("token", []))

    def _from_header(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                if scheme.lower() == b"bearer" and self._valid(credentials.strip()):
                    return True
        return False

    def _from_cookie(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                cookie: SimpleCookie = SimpleCookie()
                try:
                    cookie.load(value.decode("latin-1"))
                except Exception:
                    continue
                morsel = cookie.get(COOKIE)
                if morsel is not None and self._valid(morsel.value):
                    return True
        return False

    def _setting_cookie(self, send: Send) -> Send:
        cookie = f"{COOKIE}={self._token.decode()}; Path=/; HttpOnly; SameSite=Strict"

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
                message = {**message, "headers": headers}
            await send(message)

        return wrapped


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {
            "error": "unauthorized",
            "message": "open the link `ink serve` printed, or send Authorization: Bearer <token>",
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
