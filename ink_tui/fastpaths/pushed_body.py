"""A chunked body pushed to its reader as each network read arrives, without a task.

`BodyReader` (providers/body.py) reads a body in a task of its own: each network read
wakes that task, passes up through httpcore's and httpx's body iterators (five async
generators, each resumed and suspended per read) and then wakes the consumer. Where a
response's body is read by `DirectChunkedBody` on the lean transport, this hands it over
instead at the protocol: the transport's `data_received` decodes the chunks on the spot
(`BulkChunkedReader`) and gives the data to the reader, which wakes the consumer. One
wake-up per read instead of two, and none of the iterators; the consumer still gets
everything that arrived since its last read. A read that follows one decoded whole
(nearly every read) is decoded from its own bytes (`BulkChunkedReader.decode`), without
h11's receive buffer and `Data` event between (a one-chunk read: 10.9 -> 3.2 µs).

What stays as it was: the bytes, the errors (httpx's `RemoteProtocolError` with h11's
words for a malformed or cut-off body, `ReadError` for a broken connection), the end
handed to h11 so that a keep-alive connection goes back to the pool, the connection
closed at once when the reader stops early (an abort, an error), and reading paused on
the reader's word (a full buffer, a gathering consumer's rest). Only a body nobody has
read from is diverted; anything else is read as before.

Touches nothing more than `bulk_chunks` does (its `DirectChunkedBody` holds the h11
state and the connection), and the lean transport's own protocol; `check()` is that
fast path's. Switched off (`INK_NO_FAST_PATHS=pushed_body`) or refused, `BodyReader`
reads through httpx as before.
"""

from __future__ import annotations

from typing import Any, Protocol

import h11
import httpx
from h11._receivebuffer import ReceiveBuffer
from h11._util import LocalProtocolError

from ink_tui.fastpaths import h11_chunks
from ink_tui.fastpaths.h11_chunks import BulkChunkedReader, DirectChunkedBody
from ink_tui.providers.lean_transport import DIRECT_BODY, LeanStream


def check() -> str | None:
    return h11_chunks.check()


class BodySink(Protocol):
    """What the body is pushed to (`BodyReader`)."""

    def body_data(self, data: bytes) -> None: ...

    def body_end(self, error: Exception | None) -> None:
        """The body ended (None) or broke off; nothing more comes."""


class PushedBody:
    """A response's chunked body, pushed from its connection's protocol to a sink."""

    def __init__(self, body: DirectChunkedBody, stream: LeanStream, request: httpx.Request):
        self._body = body
        self._stream = stream
        self._request = request
        self._reader = BulkChunkedReader()
        self._buf = ReceiveBuffer()
        self._sink: BodySink | None = None
        self.finished = False

    def start(self, sink: BodySink) -> None:
        """Push from now on: what already came first (the body's start, read with the
        head, and bytes the protocol holds), then each read as it arrives."""
        self._sink = sink
        self._body.started = True  # the body is this one's to read, not httpx's too
        protocol = self._stream.protocol
        held = self._body.state._receive_buffer  # what came with the head
        if held:
            self._buf += held.maybe_extract_at_most(len(held)) or b""
        self.data(protocol.divert(self))  # and the body's start
        if protocol.eof and not self.finished:
            self.ended(protocol.error)

    def reading(self, wanted: bool) -> None:
        """Read the socket on (`True`) or leave it unread: what comes meanwhile waits in
        the kernel (TCP holds the server back) and is taken in one read."""
        if not self.finished:
            self._stream.hold_reading(not wanted)

    def close(self) -> None:
        """The reader stopped: before the end, the connection is closed at once (the
        server sees the hang-up; httpcore then drops the connection, as it drops any
        response not read to its end)."""
        if not self.finished:
            self._finish()
            self._stream.abort()

    # -- from the protocol ----------------------------------------------------------------

    def data(self, data: bytes) -> None:
        buf = self._buf
        sink = self._sink
        assert sink is not None
        reader = self._reader
        if not buf and not self.finished and not reader._reading_trailer:
            # Nothing held from the read before (nearly always): the read's chunks are
            # decoded from it as it is, without a receive buffer or h11 events between.
            parts, pos, fault = reader.decode(data)
            if parts:
                sink.body_data(parts[0] if len(parts) == 1 else b"".join(parts))
            if pos == len(data) and fault is None and not reader._reading_trailer:
                return
            # The rest (a size line on its way, the trailer, a fault to raise) as before.
            data = data[pos:]
        buf += data
        while buf and not self.finished:
            try:
                event = self._reader(buf)
            except LocalProtocolError as exc:
                self._fail(httpx.RemoteProtocolError(str(exc), request=self._request))
                return
            if event is None:
                return
            if isinstance(event, h11.Data):
                sink.body_data(bytes(event.data))
            else:
                rest = bytes(buf)
                self._finish()
                self._body.end_for_h11(rest)
                sink.body_end(None)

    def ended(self, error: BaseException | None) -> None:
        """The connection closed (`error`: why, if it broke) before the body's end."""
        if self.finished:
            return
        if error is not None:
            self._fail(httpx.ReadError(str(error), request=self._request))
        else:
            self._fail(httpx.RemoteProtocolError(h11_chunks.CUT_OFF, request=self._request))

    def _fail(self, error: Exception) -> None:
        sink = self._sink
        self._finish()
        if sink is not None:
            sink.body_end(error)

    def _finish(self) -> None:
        self.finished = True
        self._sink = None
        self._stream.protocol.undivert()


def pushed_body(response: httpx.Response) -> PushedBody | None:
    """The body of `response` to push, when it is a chunked body on the lean transport
    that nothing has read yet, as sent (no content encoding, which httpx decodes); None:
    read it through httpx."""
    if response.headers.get("content-encoding", "identity").strip().lower() != "identity":
        return None
    body: Any = response.extensions.get(DIRECT_BODY)
    if not isinstance(body, DirectChunkedBody) or body.started or response.is_stream_consumed:
        return None
    stream = body.network_stream
    if not isinstance(stream, LeanStream) or stream.protocol.diverted is not None:
        return None
    return PushedBody(body, stream, response.request)
