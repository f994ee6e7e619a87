"""The ASGI response that sends an SSE body (`events_stream.sse_stream`) to one client.

What it promises:

- `200` with `Content-Type: text/event-stream; charset=utf-8`, `Cache-Control: no-store`,
  `Connection: keep-alive` and `X-Accel-Buffering: no` (a proxy in front must not hold
  the stream back); every chunk the body yields goes out as one `http.response.body`
  message, as it is, in order.
- A keep-alive comment (`: ping`) once the stream has been quiet for `ping_s` seconds,
  so that a proxy or a browser does not take an idle stream for a dead one.
- The body ends: the response ends (`more_body` false). The client hangs up (the
  server's `http.disconnect`): the body is closed at once (its `finally` runs, whatever
  it was waiting for) and nothing more is sent. An error of the body's reaches the
  server, which closes the connection.
- A `HEAD` gets the headers and an empty body; the body is closed unread.

Why not sse-starlette's `EventSourceResponse`, which did this before: it puts each
message's send inside an anyio cancel scope (for a send timeout `ink serve` never set),
which cost several times the send itself, once per delta per client, and a stream's
keep-alive, hang-up and end are plain asyncio here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
PING = b": ping\n\n"


class SSEResponse(Response):
    """A `Response` to the routes that return it; its own `__call__` sends it."""

    media_type = "text/event-stream"

    def __init__(self, body: AsyncGenerator[bytes, None], *, ping_s: float) -> None:
        # Not Response's __init__, which renders a body it has in full.
        self.status_code = 200
        self.background: BackgroundTask | None = None
        self.raw_headers = list(HEADERS)
        self.events = body
        self.ping_s = ping_s
        # When the last message went out (loop time), and whether one is going out now.
        self._sent_at = 0.0
        self._sending = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": 200, "headers": list(self.raw_headers)}
        )
        if scope.get("method", "GET").upper() == "HEAD":
            await self.events.aclose()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        self._sent_at = asyncio.get_running_loop().time()
        stream = asyncio.ensure_future(self._stream(send))
        others = [asyncio.ensure_future(_hang_up(receive))]
        if self.ping_s > 0:
            others.append(asyncio.ensure_future(self._ping(send)))
        try:
            await asyncio.wait([stream, *others], return_when=asyncio.FIRST_COMPLETED)
        finally:
            # The stream's end, or the client gone: the rest stops either way (and a
            # cancelled request cancels all of them).
            for task in (stream, *others):
                task.cancel()
            await asyncio.gather(stream, *others, return_exceptions=True)
        if not stream.cancelled():
            error = stream.exception()
            if error is not None:
                raise error

    async def _stream(self, send: Send) -> None:
        loop = asyncio.get_running_loop()
        async with contextlib.aclosing(self.events) as body:
            async for chunk in body:
                self._sending = True
                try:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                finally:
                    self._sending = False
                self._sent_at = loop.time()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _ping(self, send: Send) -> None:
        loop = asyncio.get_running_loop()
        ping: Message = {"type": "http.response.body", "body": PING, "more_body": True}
        while True:
            if self._sending:
                # A message is on its way (a client slow to read): the stream is not
                # idle, and polling it would wake this task for nothing.
                await asyncio.sleep(self.ping_s)
                continue
            quiet_for = loop.time() - self._sent_at
            if quiet_for < self.ping_s:
                await asyncio.sleep(max(self.ping_s - quiet_for, 0.05))
                continue
            self._sent_at = loop.time()
            await send(ping)


async def _hang_up(receive: Receive) -> None:
    """Returns once the client has gone."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
