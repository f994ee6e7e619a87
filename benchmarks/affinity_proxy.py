"""A small reverse proxy for several `ink serve` processes, routing by session id.

The loopback stand-in for nginx / HAProxy / Caddy in front of `ink serve`
(docs/scaling.md), used by `benchmarks.fig11_scaling`:

    echo '{"token": T, "backends": [[URL, TOKEN], ...]}' | python -m benchmarks.affinity_proxy

(its configuration on stdin, one JSON line: tokens stay out of the process list, and a
token may start with "-") prints `PORT n` once it listens on 127.0.0.1 (loopback only).
Every request needs `Authorization: Bearer T`, the proxy's own token (401 otherwise):
each `ink serve` makes a fresh token of its own at start, so a proxy that fronts several
has to hold each backend's token and put it on the requests it forwards (with the
backend's own `Host`, which `ink serve`'s guard checks).

Routing (session affinity):

- `POST /api/sessions` without `resume` (a new session) goes to the backends in turn;
  the answer's `session.session_id` is pinned to the backend that made it. So is the
  `session_id` of a fork's answer (`POST /api/sessions/{id}/fork`: the new session is
  open where the old one is).
- A request naming a session (`/api/sessions/{id}/...`, or `POST /api/sessions` with
  `{"resume": id}`) goes to the backend the id is pinned to; an id never pinned here goes
  to `crc32(id) % backends` (the proxy restarted, or the session was opened past it).
  A hash alone cannot place new sessions: the id is made by the backend that opens it.
- Anything else (`GET /api/sessions`, the page) goes to the first backend. A real
  front would have to merge the listings; this one does not.

HTTP/1.1 both ways, keep-alive both ways (idle backend connections are pooled, dropped
after `POOL_IDLE_S`, under uvicorn's 5 s keep-alive); responses are relayed as they
arrive, a chunked one (SSE) read by read, never buffered (what `proxy_buffering off`
does in nginx). A client that hangs up mid-stream closes the backend connection, so the
backend's SSE stream ends too. Request bodies must have a Content-Length (chunked ones
are answered 501). `GET /_proxy/stats` answers the routing counters as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import sys
import time
import zlib
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

POOL_IDLE_S = 4.0
MAX_HEAD = 64 * 1024
_HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"proxy-authorization",
    b"te",
    b"upgrade",
    b"host",
    b"authorization",
    b"cookie",
}


@dataclass
class Backend:
    index: int
    host: str
    port: int
    token: str
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = field(
        default_factory=list
    )
    requests: int = 0
    connects: int = 0

    @property
    def netloc(self) -> str:
        return f"{self.host}:{self.port}"

    async def connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bool]:
        """A pooled connection (reused=True) or a new one."""
        now = time.monotonic()
        while self.idle:
            reader, writer, since = self.idle.pop()
            if now - since < POOL_IDLE_S and not reader.at_eof() and not writer.is_closing():
                return reader, writer, True
            writer.close()
        self.connects += 1
        reader, writer = await asyncio.open_connection(self.host, self.port)
        return reader, writer, False

    def give_back(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.idle.append((reader, writer, time.monotonic()))


class HttpError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass
class Request:
    method: str
    target: str
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def header(self, name: bytes) -> bytes | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


class ClientReader:
    """The client's side, with what was read past one request kept for the next."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = b""
        self.eof = False

    async def _fill(self) -> bool:
        data = await self._reader.read(65536)
        if not data:
            self.eof = True
            return False
        self._buffer += data
        return True

    async def request(self) -> Request | None:
        while b"\r\n\r\n" not in self._buffer:
            if len(self._buffer) > MAX_HEAD:
                raise HttpError(431, "too_large", "request head too large")
            if not await self._fill():
                return None
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        line, *lines = head.split(b"\r\n")
        method, target, _version = line.decode("latin-1").split(" ", 2)
        headers = []
        for raw in lines:
            name, _, value = raw.partition(b":")
            headers.append((name.strip(), value.strip()))
        request = Request(method, target, headers, b"")
        if request.header(b"transfer-encoding") is not None:
            raise HttpError(501, "not_implemented", "chunked request bodies are not relayed")
        length = int(request.header(b"content-length") or b"0")
        while len(self._buffer) < length:
            if not await self._fill():
                return None
        request.body, self._buffer = self._buffer[:length], self._buffer[length:]
        return request

    async def hung_up(self) -> None:
        """Returns once the client closes (reading ahead into the buffer meanwhile)."""
        while await self._fill():
            pass


class ChunkScanner:
    """Follows a chunked body's framing over raw reads, to know where it ends."""

    def __init__(self) -> None:
        self._skip = 0
        self._line = b""
        self._trailer = False
        self.done = False

    def feed(self, data: bytes) -> None:
        i, n = 0, len(data)
        while i < n and not self.done:
            if self._skip:
                taken = min(self._skip, n - i)
                self._skip -= taken
                i += taken
                continue
            end = data.find(b"\n", i)
            if end < 0:
                self._line += data[i:]
                return
            line = (self._line + data[i:end]).rstrip(b"\r")
            self._line, i = b"", end + 1
            if self._trailer:
                self.done = not line
                continue
            size = int(line.split(b";", 1)[0], 16)
            if size == 0:
                self._trailer = True
            else:
                self._skip = size + 2


class Proxy:
    def __init__(self, backends: list[Backend], token: str) -> None:
        self.backends = backends
        self._token = f"Bearer {token}".encode()
        self.pins: dict[str, int] = {}
        self._turn = 0
        self.by_pin = 0
        self.by_hash = 0
        self.new_sessions = 0
        self.streams = 0
        self.relayed_reads = 0
        self.relayed_bytes = 0

    # -- routing ------------------------------------------------------------------------

    def route(self, request: Request) -> tuple[Backend, bool]:
        """The backend for `request`, and whether its answer names a session to pin."""
        path = request.target.split("?", 1)[0]
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "sessions"] and len(parts) >= 3:
            return self._by_id(parts[2]), parts[3:] == ["fork"]
        if parts == ["api", "sessions"] and request.method == "POST":
            resume = None
            with contextlib.suppress(ValueError, AttributeError):
                resume = json.loads(request.body or b"{}").get("resume")
            if isinstance(resume, str) and resume.strip():
                return self._by_id(resume.strip()), True
            self.new_sessions += 1
            backend = self.backends[self._turn % len(self.backends)]
            self._turn += 1
            return backend, True
        return self.backends[0], False

    def _by_id(self, session_id: str) -> Backend:
        pinned = self.pins.get(session_id)
        if pinned is not None:
            self.by_pin += 1
            return self.backends[pinned]
        self.by_hash += 1
        return self.backends[zlib.crc32(session_id.encode()) % len(self.backends)]

    def _pin(self, backend: Backend, body: bytes) -> None:
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            data = json.loads(body)
            session_id = data.get("session_id") or data["session"]["session_id"]
            self.pins[str(session_id)] = backend.index

    def stats(self) -> dict[str, Any]:
        return {
            "backends": [
                {"url": f"http://{b.netloc}", "requests": b.requests, "connects": b.connects}
                for b in self.backends
            ],
            "pins": self.pins,
            "by_pin": self.by_pin,
            "by_hash": self.by_hash,
            "new_sessions": self.new_sessions,
            "streams": self.streams,
            "relayed_reads": self.relayed_reads,
            "relayed_bytes": self.relayed_bytes,
        }

    # -- serving ------------------------------------------------------------------------

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = ClientReader(reader)
        try:
            while True:
                try:
                    request = await client.request()
                    if request is None:
                        return
                    if not secrets.compare_digest(
                        request.header(b"authorization") or b"", self._token
                    ):
                        raise HttpError(401, "unauthorized", "the proxy's token is needed")
                    if request.target.split("?", 1)[0] == "/_proxy/stats":
                        await _answer(writer, 200, self.stats())
                        continue
                    keep = await self.forward(request, client, writer)
                except HttpError as error:
                    answer = {"error": error.code, "message": str(error)}
                    await _answer(writer, error.status, answer)
                    return
                if not keep or client.eof:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def forward(
        self, request: Request, client: ClientReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Relay one request and its answer; whether the client connection goes on."""
        backend, pin = self.route(request)
        backend.requests += 1
        head = [f"{request.method} {request.target} HTTP/1.1".encode()]
        head.append(b"Host: " + backend.netloc.encode())
        head.append(b"Authorization: Bearer " + backend.token.encode())
        head += [k + b": " + v for k, v in request.headers if k.lower() not in _HOP_BY_HOP]
        raw = b"\r\n".join(head) + b"\r\n\r\n" + request.body
        for attempt in range(2):
            try:
                up_reader, up_writer, reused = await backend.connection()
            except OSError as refused:
                message = f"backend {backend.netloc} cannot be reached"
                raise HttpError(502, "bad_gateway", message) from refused
            try:
                up_writer.write(raw)
                await up_writer.drain()
                status_head = await up_reader.readuntil(b"\r\n\r\n")
                break
            except (ConnectionError, asyncio.IncompleteReadError) as failed:
                up_writer.close()
                # A pooled connection the backend closed meanwhile: once more on a new one.
                if not reused or attempt:
                    message = f"backend {backend.netloc} hung up"
                    raise HttpError(502, "bad_gateway", message) from failed
        return await self._relay(backend, pin, status_head, up_reader, up_writer, client, writer)

    async def _relay(
        self,
        backend: Backend,
        pin: bool,
        head: bytes,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
        client: ClientReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        lines = head[:-4].split(b"\r\n")
        fields = {}
        for raw in lines[1:]:
            name, _, value = raw.partition(b":")
            fields[name.strip().lower()] = value.strip().lower()
        status = int(lines[0].split()[1])
        backend_keeps = fields.get(b"connection") != b"close"
        writer.write(head)
        if b"content-length" in fields:
            body = await up_reader.readexactly(int(fields[b"content-length"]))
            writer.write(body)
            await writer.drain()
            if pin and status in (200, 201):
                self._pin(backend, body)
        elif fields.get(b"transfer-encoding") == b"chunked":
            self.streams += 1
            done = await self._stream(up_reader, writer, client)
            backend_keeps = backend_keeps and done
            if not done:
                up_writer.close()
                return False
        elif status in (204, 304) or status < 200:
            await writer.drain()
        else:
            # Framed by the end of the connection: relay until it closes, then close too.
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
            up_writer.close()
            return False
        if backend_keeps:
            backend.give_back(up_reader, up_writer)
        else:
            up_writer.close()
        return True

    async def _stream(
        self, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client: ClientReader
    ) -> bool:
        """Relay a chunked body read by read; False if the client hung up first."""
        scanner = ChunkScanner()
        hang_up = asyncio.ensure_future(client.hung_up())
        try:
            while not scanner.done:
                read = asyncio.ensure_future(up_reader.read(65536))
                finished, _ = await asyncio.wait(
                    (read, hang_up), return_when=asyncio.FIRST_COMPLETED
                )
                if hang_up in finished:
                    read.cancel()
                    return False
                data = read.result()
                if not data:
                    raise ConnectionError("the backend closed a chunked answer early")
                self.relayed_reads += 1
                self.relayed_bytes += len(data)
                scanner.feed(data)
                writer.write(data)
                await writer.drain()
            return True
        finally:
            hang_up.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await hang_up


async def _answer(writer: asyncio.StreamWriter, status: int, data: object) -> None:
    body = json.dumps(data).encode()
    writer.write(
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    await writer.drain()


def parse_backends(pairs: list[list[str]]) -> list[Backend]:
    backends = []
    for index, (url, token) in enumerate(pairs):
        parts = urlsplit(url)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1") or parts.port is None:
            raise SystemExit(f"a backend must be a loopback URL with a port: {url}")
        backends.append(Backend(index, parts.hostname, parts.port, token))
    return backends


async def serve(backends: list[Backend], token: str, port: int) -> None:
    proxy = Proxy(backends, token)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", port, backlog=1024)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def run(coro: Coroutine[Any, Any, None]) -> None:
    """On uvloop when it is installed (as ink's RPC mode runs), else asyncio's loop."""
    with contextlib.suppress(ImportError):
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.run(coro)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    config = json.loads(sys.stdin.readline())
    if not config.get("backends"):
        raise SystemExit("give at least one backend: [URL, TOKEN]")
    with contextlib.suppress(KeyboardInterrupt):
        run(serve(parse_backends(config["backends"]), str(config["token"]), args.port))


if __name__ == "__main__":
    main()
