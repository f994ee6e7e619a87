"""Reading a streamed response body in batches: whatever has arrived, the moment it is asked.

httpx hands a chunked body over one HTTP chunk at a time, and servers put each SSE event
in a chunk of its own, so a fast stream of small deltas is tens of thousands of tiny
pieces. Taking them one by one costs a parse, an event and a trip through every consumer
each. `BodyReader` instead reads the body in a task of its own and `read()` returns all
the bytes gathered since the last call; it waits only when nothing is there, so text is
still shown as soon as it arrives. While the consumer keeps up, a batch is what one
network read brought; when it falls behind, batches grow (up to `READ_AHEAD`, after which
the reading pauses and the server is held back by TCP, as before).

A consumer that shows the text at a frame rate can ask for batches of at least a
frame (`gather_s`): `read()` then returns no sooner than `gather_s` after its last
return (at once at the end of the body, on abort, or with `READ_AHEAD` gathered), so a
model that writes an event every few milliseconds costs one trip through the
consumers a frame instead of one a write. Between two batches the reading rests too
(`_nap`; on the lean transport the socket is left unread), so the process wakes about
once a frame, not once a write. Programs reading every event (RPC, serve) leave it at 0.

Abort: one callback per response. Firing the signal cancels the reading task, which
closes the connection at once (the server sees the hang-up even while the consumer is
busy elsewhere), and wakes a waiting `read()`, which raises `AbortError`. The consumer's
own task is never cancelled, so whatever it awaits between two reads is left alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from types import TracebackType
from typing import cast

import httpx

from ink_tui.core.abort import AbortSignal
from ink_tui.providers.lean_transport import LeanStream

# Bytes gathered but not yet taken at which the reading pauses; bounds both the memory
# held for a slow consumer and the size (so the parse time) of one batch.
READ_AHEAD = 256 * 1024
# The longest the reading rests between two reads while the consumer gathers (`_nap`).
NAP_MAX_S = 0.05
# How long before the consumer's next batch the reading wakes from its rest: time
# enough to read and parse what waits, which a late wake-up leaves for the next batch.
NAP_MARGIN_S = 0.002


class BodyReader:
    """`async with BodyReader(response, signal) as body:` then `await body.read()`."""

    def __init__(
        self, response: httpx.Response, signal: AbortSignal, *, gather_s: float = 0.0
    ) -> None:
        self._response = response
        self._signal = signal
        self._gather_s = gather_s
        self._returned_at: float | None = None
        # A read held until `gather_s` after the last return, woken early by the end,
        # an abort or a full buffer.
        self._held: asyncio.Future[None] | None = None
        self._parts: list[bytes] = []
        self._size = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        # The consumer waits on `_arrived` for data, the reading task on `_room` for space.
        self._arrived: asyncio.Future[None] | None = None
        self._room: asyncio.Future[None] | None = None
        self._remove_abort = _nothing

    async def __aenter__(self) -> BodyReader:
        self._signal.raise_if_aborted()
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
        task = self._task
        assert task is not None, "read() needs `async with BodyReader(...)`"
        if self._gather_s and self._returned_at is not None:
            await self._gather(task)
        while True:
            self._signal.raise_if_aborted()
            if self._parts:
                parts, self._parts, self._size = self._parts, [], 0
                _wake(self._room)
                if self._gather_s:
                    self._returned_at = asyncio.get_running_loop().time()
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

    async def _gather(self, task: asyncio.Task[None]) -> None:
        """Wait out the rest of `gather_s` since the last return (not past the end)."""
        assert self._returned_at is not None
        loop = asyncio.get_running_loop()
        delay = self._returned_at + self._gather_s - loop.time()
        if delay <= 0 or task.done() or self._signal.aborted or self._size >= READ_AHEAD:
            return
        held = self._held = loop.create_future()
        timer = loop.call_later(delay, _wake, held)
        try:
            await held
        finally:
            self._held = None
            timer.cancel()

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
                        _wake(self._held)
                        room = self._room = asyncio.get_running_loop().create_future()
                        await room
                    elif self._gather_s:
                        await self._nap()
        finally:
            _wake(self._arrived)  # the end, or the error, is news for a waiting read()
            _wake(self._held)

    async def _nap(self) -> None:
        """While the consumer is held, wait before reading on: what the server writes
        meanwhile is read at once, not write by write (each read is a wake-up and a
        trip through httpx's layers). Woken `NAP_MARGIN_S` before the consumer, so its
        batch holds what came; never more than `NAP_MAX_S`, so the end of the body is
        seen soon however long the gathering."""
        if self._returned_at is None:
            return  # the first batch goes at once
        loop = asyncio.get_running_loop()
        until = self._returned_at + self._gather_s - min(self._gather_s / 4, NAP_MARGIN_S)
        delay = min(until - loop.time(), NAP_MAX_S)
        if delay <= 0:
            return
        network = self._response.extensions.get("network_stream")
        hold = network.hold_reading if isinstance(network, LeanStream) else None
        if hold is not None:
            hold(True)
        try:
            await asyncio.sleep(delay)
        finally:
            if hold is not None:
                hold(False)

    def _on_abort(self, _reason: str) -> None:
        self._stop()
        _wake(self._arrived)
        _wake(self._held)

    def _stop(self) -> None:
        # Once only: a cancelled read closes the connection on its way out (shielded from
        # anyio's cancel scopes, not from a second `Task.cancel()`), and cancelling that
        # close would leave the socket open and the server streaming to no one.
        if self._task is not None and not self._stopping:
            self._stopping = True
            self._task.cancel()


def _time_out(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


def _wake(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


def _nothing() -> None:
    pass
