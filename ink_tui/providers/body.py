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

Where the `pushed_body` fast path takes a body (chunked, on the lean transport), there
is no reading task: the connection's protocol decodes each network read as it arrives
and hands the data to `body_data`, which wakes the consumer; a full buffer and a
gathering consumer's rest pause the socket's reading just the same. Everything above
holds either way.

Abort: one callback per response. Firing the signal cancels the reading task (pushed:
drops the connection), which closes the connection at once (the server sees the
hang-up even while the consumer is busy elsewhere), and wakes a waiting `read()`, which
raises `AbortError`. The consumer's own task is never cancelled, so whatever it awaits
between two reads is left alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from types import TracebackType
from typing import TYPE_CHECKING, cast

import httpx

from ink_tui import fastpaths
from ink_tui.core.abort import AbortSignal
from ink_tui.providers.lean_transport import LeanStream

if TYPE_CHECKING:
    from ink_tui.fastpaths.pushed_body import PushedBody

# Bytes gathered but not yet taken at which the reading pauses; bounds both the memory
# held for a slow consumer and the size (so the parse time) of one batch.
READ_AHEAD = 256 * 1024
# Past the read-ahead, what one more read may add to a batch: the reading task stops
# after the read that fills it (httpcore reads 64 KB at a time); a pushed read, which
# can be larger (the transport's own read), is cut here, so batches are alike both ways.
READ_MORE = 64 * 1024
# The longest the reading rests between two reads while the consumer gathers (`_nap`):
# the end of the body is seen at most this late. As long as the terminal's batches
# (`transcript_pacing.NETWORK_GATHER_S`), so that a batch is one read: a model writing
# every few milliseconds otherwise woke the process once a write for the rest of it.
NAP_MAX_S = 0.1
# How long before the consumer's next batch the reading wakes from its rest: time
# enough to read and parse what waits, which a late wake-up leaves for the next batch.
NAP_MARGIN_S = 0.002
# A batch this large means the server sends faster than a rest saves anything: each read
# brings plenty, and a socket left unread would fill TCP's window and hold the server
# back (a flood then came a window per batch). After such a batch the reading goes on.
NAP_BELOW = 32 * 1024


class BodyReader:
    """`async with BodyReader(response, signal) as body:` then `await body.read()`."""

    def __init__(
        self, response: httpx.Response, signal: AbortSignal, *, gather_s: float = 0.0
    ) -> None:
        self._response = response
        self._signal = signal
        self._gather_s = gather_s
        self._returned_at: float | None = None
        # The size of the batch last returned: a large one means no rest (`NAP_BELOW`).
        self._returned_size = 0
        # A read held until `gather_s` after the last return, woken early by the end,
        # an abort or a full buffer.
        self._held: asyncio.Future[None] | None = None
        self._parts: list[bytes] = []
        self._size = 0
        # The body is read by a task of its own (`_pump`), or pushed to `body_data` as
        # it arrives (`fastpaths.pushed_body`).
        self._task: asyncio.Task[None] | None = None
        self._pushed: PushedBody | None = None
        self._started = False
        self._stopping = False
        # The body's end (`_ended`), or why it broke off (`_error`).
        self._ended = False
        self._error: BaseException | None = None
        # The consumer waits on `_arrived` for data, the reading task on `_room` for space.
        self._arrived: asyncio.Future[None] | None = None
        self._room: asyncio.Future[None] | None = None
        # Pushed: reading rests while the buffer is full or a gathering consumer is held.
        self._full = False
        self._napping: asyncio.TimerHandle | None = None
        self._remove_abort = _nothing

    async def __aenter__(self) -> BodyReader:
        self._signal.raise_if_aborted()
        self._started = True
        pushed = _pushed_body(self._response)
        if pushed is not None:
            self._pushed = pushed
            pushed.start(self)
        else:
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
        self._stop()
        task = self._task
        if task is None:
            return
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
        assert self._started, "read() needs `async with BodyReader(...)`"
        if self._gather_s and self._returned_at is not None:
            await self._gather()
        while True:
            self._signal.raise_if_aborted()
            if self._parts:
                batch = self._take()
                if self._gather_s:
                    self._returned_at = asyncio.get_running_loop().time()
                    self._returned_size = len(batch)
                    if self._pushed is not None:
                        self._nap_pushed()
                return batch
            if self._ended:
                if self._error is not None:
                    raise self._error
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

    def _take(self) -> bytes:
        """What has arrived, up to `READ_AHEAD` and `READ_MORE` bytes (a pushed network
        read may bring more at once); the room it leaves lets the reading go on."""
        parts = self._parts
        limit = READ_AHEAD + READ_MORE
        if self._size <= limit:
            self._parts, self._size = [], 0
            batch = parts[0] if len(parts) == 1 else b"".join(parts)
        else:
            whole = b"".join(parts)
            batch, rest = whole[:limit], whole[limit:]
            self._parts, self._size = [rest], len(rest)
        if self._size < READ_AHEAD:
            if self._pushed is None:
                _wake(self._room)
            elif self._full:
                self._full = False
                self._update_reading()
        return batch

    # -- pushed (fastpaths.pushed_body) -----------------------------------------------------

    def body_data(self, data: bytes) -> None:
        self._parts.append(data)
        self._size += len(data)
        _wake(self._arrived)
        if self._size >= READ_AHEAD and not self._full:
            self._full = True
            self._update_reading()
            _wake(self._held)

    def body_end(self, error: Exception | None) -> None:
        self._ended = True
        self._error = error
        self._end_nap()
        _wake(self._arrived)  # the end, or the error, is news for a waiting read()
        _wake(self._held)

    def _nap_pushed(self) -> None:
        """A gathering consumer took a batch: leave the socket unread until shortly
        before its next one (`_nap` says why), so what comes meanwhile is one read."""
        delay = self._rest_s()
        if self._ended or delay <= 0:
            return
        if self._napping is not None:
            self._napping.cancel()  # a rest still going: this one replaces it
        self._napping = asyncio.get_running_loop().call_later(delay, self._end_nap)
        self._update_reading()

    def _end_nap(self) -> None:
        if self._napping is not None:
            self._napping.cancel()
            self._napping = None
            self._update_reading()

    def _update_reading(self) -> None:
        if self._pushed is not None:
            self._pushed.reading(not (self._full or self._napping is not None))

    async def _gather(self) -> None:
        """Wait out the rest of `gather_s` since the last return (not past the end)."""
        assert self._returned_at is not None
        loop = asyncio.get_running_loop()
        delay = self._returned_at + self._gather_s - loop.time()
        if delay <= 0 or self._ended or self._signal.aborted or self._size >= READ_AHEAD:
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
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            self._error = error
            raise
        finally:
            self._ended = True
            _wake(self._arrived)  # the end, or the error, is news for a waiting read()
            _wake(self._held)

    async def _nap(self) -> None:
        """While the consumer is held, wait before reading on: what the server writes
        meanwhile is read at once, not write by write (each read is a wake-up and a
        trip through httpx's layers). Woken `NAP_MARGIN_S` before the consumer, so its
        batch holds what came; never more than `NAP_MAX_S`, so the end of the body is
        seen soon however long the gathering."""
        delay = self._rest_s()
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

    def _rest_s(self) -> float:
        """How long the reading may rest now: until `NAP_MARGIN_S` before the consumer's
        next batch, at most `NAP_MAX_S`; not at all before the first batch (it goes at
        once) or after a flood (`NAP_BELOW`: it is read on)."""
        if self._returned_at is None or self._returned_size >= NAP_BELOW:
            return 0.0
        until = self._returned_at + self._gather_s - min(self._gather_s / 4, NAP_MARGIN_S)
        return min(until - asyncio.get_running_loop().time(), NAP_MAX_S)

    def _on_abort(self, _reason: str) -> None:
        self._stop()
        _wake(self._arrived)
        _wake(self._held)

    def _stop(self) -> None:
        # Once only: a cancelled read closes the connection on its way out (shielded from
        # anyio's cancel scopes, not from a second `Task.cancel()`), and cancelling that
        # close would leave the socket open and the server streaming to no one.
        if self._stopping:
            return
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
        if self._pushed is not None:
            self._end_nap()
            self._pushed.close()


def _pushed_body(response: httpx.Response) -> PushedBody | None:
    if not fastpaths.enabled("pushed_body"):
        return None
    from ink_tui.fastpaths.pushed_body import pushed_body

    return pushed_body(response)


def _time_out(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


def _wake(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


def _nothing() -> None:
    pass
