"""Requests from elsewhere are refused; every answer says how a browser may use it.

Two ASGI middlewares around the app (`app.build_app`): `Shield` outside the token check,
`SameOrigin` inside it.

What they promise:

- Every answer (the page, its assets, the API, errors, the token check's 401) carries
  `Content-Security-Policy` (scripts, styles and connections from this server only, no
  framing, no `<base>`, forms only to here), `X-Frame-Options: DENY`,
  `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` and
  `Cross-Origin-Resource-Policy: same-origin`.
- Host (DNS rebinding): unless `--allow-remote`, the `Host` header must name the address
  served: `127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT` (PORT the one listened
  on), or the host of a `--public-origin`. Anything else is 421 `wrong_host`: a page of
  another site that made its name resolve to 127.0.0.1 reaches nothing.
- A state-changing request (POST, PUT, PATCH, DELETE) that passed on the cookie alone
  must come from the page itself: its `Origin` is this server's (its scheme, any scheme
  with `--allow-remote` where TLS is a proxy's, and the `Host` it was sent to) or a
  `--public-origin`, or, without an `Origin`,
  `Sec-Fetch-Site: same-origin`. Otherwise 403 `cross_origin`: the cookie is sent with
  requests other pages on 127.0.0.1 make (SameSite does not tell ports apart). Clients
  with `Authorization: Bearer` (or the link's `?token=`) hold the token and are not
  asked where they come from.
- A request body must be `Content-Type: application/json` (415 `unsupported_media_type`),
  whoever sends it, and at most `MAX_BODY` bytes (413 `too_large`), counted while it is
  read, whatever `Content-Length` says.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ink_tui.serve.auth import AUTH_KEY

MAX_BODY = 1024 * 1024
# A body over the limit is read to its end (and dropped) up to this much before the 413
# goes out, so that the client, still sending, gets the answer instead of a reset.
_DRAIN = 16 * 1024 * 1024
CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def normal_origin(origin: str) -> str | None:
    """`scheme://host[:port]` lower-cased, without a default port; None if it is not an
    http(s) origin."""
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.netloc or parts.path not in ("", "/"):
        return None
    return f"{scheme}://{_netloc(scheme, parts.netloc)}"


def _netloc(scheme: str, netloc: str) -> str:
    netloc = netloc.lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default and netloc.endswith(f":{default}"):
        netloc = netloc[: -len(default) - 1]
    return netloc


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def refuse(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": code, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Shield:
    """The security headers on every answer, and the Host check."""

    def __init__(
        self, app: ASGIApp, *, allow_remote: bool = False, public_origins: Sequence[str] = ()
    ) -> None:
        self.app = app
        self.allow_remote = allow_remote
        self._public_hosts = {
            urlsplit(origin).netloc for origin in public_origins if normal_origin(origin)
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if scope["type"] != "http":
            if self.allow_remote or self._host_ok(scope, host):
                await self.app(scope, receive, send)
            else:
                await send({"type": "websocket.close", "code": 1008})
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [h for h in SECURITY_HEADERS if h[0] not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        if not self.allow_remote and not self._host_ok(scope, host):
            await refuse(
                with_headers,
                421,
                "wrong_host",
                f"this server answers to {' or '.join(self._hosts(scope)) or 'its own address'} "
                f"only, not to Host {host!r} (behind a proxy, start it with --public-origin)",
            )
            return
        await self.app(scope, receive, with_headers)

    def _hosts(self, scope: Scope) -> list[str]:
        server = scope.get("server")
        hosts = sorted(self._public_hosts)
        if server and server[1] is not None:
            hosts = [f"{name}:{server[1]}" for name in _LOOPBACK_NAMES] + hosts
        return hosts

    def _host_ok(self, scope: Scope, host: str | None) -> bool:
        if not host:
            return False
        return host.strip().lower() in self._hosts(scope)


class SameOrigin:
    """Where a cookie-borne change comes from, the body's type and its size."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allow_remote: bool = False,
        public_origins: Sequence[str] = (),
        max_body: int = MAX_BODY,
    ) -> None:
        self.app = app
        self.max_body = max_body
        # Served remotely, TLS is a proxy's: the page's scheme need not be the server's.
        self.allow_remote = allow_remote
        self._public = {o for o in map(normal_origin, public_origins) if o is not None}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method in CHANGING and scope.get(AUTH_KEY) == "cookie" and not self._same_origin(scope):
            await refuse(
                send,
                403,
                "cross_origin",
                "this request came from another page (Origin "
                f"{_header(scope, b'origin')!r}): a change made with the cookie alone is "
                "taken only from ink serve's own page; programs send "
                "Authorization: Bearer <token>",
            )
            return
        length = _header(scope, b"content-length")
        chunked = _header(scope, b"transfer-encoding") is not None
        declared = _length(length)
        if declared is None and length is not None:
            await refuse(send, 400, "bad_request", "Content-Length is not a number")
            return
        if not chunked and not declared:
            await self.app(scope, receive, send)
            return
        media = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            await refuse(
                send,
                415,
                "unsupported_media_type",
                "send the body as JSON, with Content-Type: application/json",
            )
            return
        try:
            body = await self._read(receive, declared)
        except _ClientLeft:
            return  # nobody to answer, and half a body is no request
        if body is None:
            await refuse(
                send,
                413,
                "too_large",
                f"the body is larger than {self.max_body} bytes, the most ink serve reads",
            )
            return
        await self.app(scope, _replaying(body, receive), send)

    def _same_origin(self, scope: Scope) -> bool:
        origin = _header(scope, b"origin")
        if origin is None:
            return (_header(scope, b"sec-fetch-site") or "").strip().lower() == "same-origin"
        shown = normal_origin(origin)
        if shown is None:
            return False  # "null" (a sandboxed frame, a file, a redirect) among others
        if shown in self._public:
            return True
        scheme = shown.split(":", 1)[0]
        if not self.allow_remote and scheme != scope.get("scheme", "http"):
            return False
        host = _header(scope, b"host")
        return host is not None and shown == f"{scheme}://{_netloc(scheme, host.strip())}"

    async def _read(self, receive: Receive, declared: int | None) -> bytes | None:
        """The whole body, or None when it is over the limit (then read on and dropped
        up to `_DRAIN`, so the answer reaches a client that is still sending)."""
        if declared is not None and declared > _DRAIN:
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _ClientLeft
            piece = message.get("body", b"")
            size += len(piece)
            if size <= self.max_body:
                chunks.append(piece)
            elif size > _DRAIN:
                return None
            if not message.get("more_body", False):
                break
        return b"".join(chunks) if size <= self.max_body else None


class _ClientLeft(Exception):
    """The client hung up before its body was read."""


def _length(raw: str | None) -> int | None:
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body read already, then the client's own messages
    (its hang-up, which a waited prompt listens for)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
