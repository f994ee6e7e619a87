"""Reading a streamed response body in batches: whatever has arrived, the moment it is asked.

httpx hands a chunked body over one HTTP chunk at a time, and servers put each SSE event
in a chunk of its own, so a fast stream of small deltas is tens of thousands of tiny
pieces. Taking them one by one costs a parse, an event and a trip through every consumer
each. `BodyReader` instead reads the body in a task of its own and `read()` returns all
the bytes gathered since the last call; it waits only when nothing is there, so text is
still shown as soon as it arrives. While the consumer keeps up, a batch is what one
network read brought; when it falls behind, batches grow (up to `READ_AHEAD`, after which
the reading pauses and the server is held back by TCP, as before).

Abort: one callback per response. Firing the signal cancels the reading task, which
closes the connection at once (the server sees the hang-up even while the consumer is
busy elsewhere), and wakes a waiting `read()`, which raises `AbortError`. The consumer's
own task is never cancelled, so whatever it awaits between two reads is left alone.

Direct reading: a chunked body on the lean transport (`lean_transport`, `bulk_chunks`)
needs no task of its own, since its connection gathers what arrives (up to its high-water
mark, as the task's read-ahead did). `read()` then waits on the connection itself and
decodes what is there: one task wake-up per network read instead of two, and none of
httpx's and httpcore's iterator layers. The same promises hold: an abort drops the
connection at once from its callback, a wait times out with `TimeoutError` (the body is
still read on), the request's read timeout and a broken or cut body raise the transport's
own `httpx` errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from types import TracebackType
from typing import cast

import httpcore
import httpx
from httpx._models import request_context
from httpx._transports.default import map_httpcore_exceptions

from ink_tui.core.abort import AbortSignal
from ink_tui.providers.bulk_chunks import DirectChunkedBody
from ink_tui.providers.lean_transport import LeanStream

# Bytes gathered but not yet taken at which the reading pauses; bounds both the memory
# held for a slow consumer and the size (so the parse time) of one batch.
READ_AHEAD = 256 * 1024
# What a direct read can raise from httpcore, raised as httpx's (as its iterators do).
_HTTPCORE_ERRORS = (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError)


class BodyReader:
    """`async with BodyReader(response, signal) as body:` then `await body.read()`."""

    def __init__(self, response: httpx.Response, signal: AbortSignal) -> None:
        self._response = response
        self._signal = signal
        self._parts: list[bytes] = []
        self._size = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        # The consumer waits on `_arrived` for data, the reading task on `_room` for space.
        self._arrived: asyncio.Future[None] | None = None
        self._room: asyncio.Future[None] | None = None
        self._remove_abort = _nothing
        self._direct = _direct_body(response)
        self._direct_stream: LeanStream | None = None
        # The request's read timeout runs from the last network read, as httpcore's does.
        self._read_timeout: float | None = None
        self._read_since = 0.0

    async def __aenter__(self) -> BodyReader:
        self._signal.raise_if_aborted()
        direct = self._direct
        if direct is not None:
            self._response.is_stream_consumed = True  # read here, not by httpx's iterators
            self._direct_stream = cast(LeanStream, direct.network_stream)
            self._read_timeout = direct.read_timeout
            self._read_since = asyncio.get_running_loop().time()
            self._remove_abort = self._signal.add_callback(self._on_abort)
            return self
        self._task = asyncio.create_task(self._pump(), name="ink-provider-body")
        self._remove_abort = self._signal.add_callback(self._on_abort)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._remove_abort()
        task = self._task
        if task is None:
            return
        self._stop()
        # The task must be out of the response's stream before the caller closes the
        # response; `wait` (unlike awaiting the task) never raises the task's own error.
        await asyncio.wait((task,))
        if not task.cancelled():
            task.exception()  # seen here, or deliberately dropped: never "never retrieved"

    async def read(self, wait: float | None = None) -> bytes | None:
        """The bytes that arrived since the last call (waiting for some); None at the end.

        Raises `AbortError` once the signal has fired, the transport's own
        `httpx.HTTPError` when the body broke off, and `TimeoutError` when nothing came
        within `wait` seconds (the body is still read on; call again to go on waiting).
        """
        if self._direct is not None:
            return await self._read_direct(self._direct, wait)
        task = self._task
        assert task is not None, "read() needs `async with BodyReader(...)`"
        while True:
            self._signal.raise_if_aborted()
            if self._parts:
                parts, self._parts, self._size = self._parts, [], 0
                _wake(self._room)
                return parts[0] if len(parts) == 1 else b"".join(parts)
            if task.done():
                error = None if task.cancelled() else task.exception()
                if error is not None:
                    raise error
                return None
            loop = asyncio.get_running_loop()
            arrived = self._arrived = loop.create_future()
            # A bare timer that fails the future: a stream of small reads waits once per
            # read, and `asyncio.timeout` costs several times as much per wait.
            timer = None if wait is None else loop.call_later(wait, _time_out, arrived)
            try:
                await arrived
            finally:
                self._arrived = None
                if timer is not None:
                    timer.cancel()

    async def _read_direct(self, body: DirectChunkedBody, wait: float | None) -> bytes | None:
        stream = self._direct_stream
        assert stream is not None, "read() needs `async with BodyReader(...)`"
        loop = asyncio.get_running_loop()
        while True:
            self._signal.raise_if_aborted()
            try:
                # One network read's worth per batch, as the task handed over: a bigger
                # batch would only hold the loop (and the screen) longer at a time.
                data = body.take(1)
                if data is None or data:
                    self._read_since = loop.time()
                    return data
                # Whichever comes first: the caller's wait, or the read timeout's end.
                backstop = self._read_timeout
                left = None if backstop is None else self._read_since + backstop - loop.time()
                if left is not None and left <= 0:
                    raise httpcore.ReadTimeout("timed out reading from the server")
                limit = wait if left is None or (wait is not None and wait < left) else left
                try:
                    await stream.readable(limit)
                except TimeoutError:
                    if left is not None and limit == left:
                        raise httpcore.ReadTimeout("timed out reading from the server") from None
                    raise
            except _HTTPCORE_ERRORS:
                # httpcore's error as httpx's, as its iterators raise it (mapped only
                # here: the mapping's context managers cost more than a read).
                with request_context(request=self._response.request), map_httpcore_exceptions():
                    raise

    async def _pump(self) -> None:
        response = self._response
        try:
            # Without a content encoding the decoding layer of `aiter_bytes` only costs
            # time per HTTP chunk, and servers send an SSE event per chunk.
            encoding = response.headers.get("content-encoding", "").strip().lower()
            encoded = encoding not in ("", "identity")
            chunks = cast(
                AsyncGenerator[bytes, None],
                response.aiter_bytes() if encoded else response.aiter_raw(),
            )
            async with aclosing(chunks):
                async for chunk in chunks:
                    self._parts.append(chunk)
                    self._size += len(chunk)
                    _wake(self._arrived)
                    if self._size >= READ_AHEAD:
                        room = self._room = asyncio.get_running_loop().create_future()
                        await room
        finally:
            _wake(self._arrived)  # the end, or the error, is news for a waiting read()

    def _on_abort(self, _reason: str) -> None:
        if self._direct_stream is not None:
            self._direct_stream.hang_up()
            return
        self._stop()
        _wake(self._arrived)

    def _stop(self) -> None:
        # Once only: a cancelled read closes the connection on its way out (shielded from
        # anyio's cancel scopes, not from a second `Task.cancel()`), and cancelling that
        # close would leave the socket open and the server streaming to no one.
        if self._task is not None and not self._stopping:
            self._stopping = True
            self._task.cancel()


def _direct_body(response: httpx.Response) -> DirectChunkedBody | None:
    """The response's body, if it can be read directly: a chunked body on the lean
    transport, untouched and not encoded; None for anything else (read by the task)."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity") or response.is_stream_consumed or response.is_closed:
        return None
    # httpx's bound stream -> its httpcore stream -> the pool's stream -> the body.
    outer = getattr(response.stream, "_stream", None)
    pooled = getattr(outer, "_httpcore_stream", None)
    body = getattr(pooled, "_stream", None)
    if not isinstance(body, DirectChunkedBody):
        return None
    if not isinstance(body.network_stream, LeanStream):
        return None
    return body


def _time_out(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


def _wake(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


def _nothing() -> None:
    pass
