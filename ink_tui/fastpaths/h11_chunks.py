"""Chunked response bodies read a network read at a time, not an HTTP chunk at a time.

A model server streams each SSE event in an HTTP chunk of its own, so a fast reply is tens
of thousands of chunks. h11's own `ChunkedReader` makes each of them an event, and each
event is then a trip through h11's state machine, httpcore's body iterator, httpx's and
the provider's: about 20 µs per chunk, more than everything the provider does with the
event. `BulkChunkedReader` decodes every complete chunk in the buffer in one go and
returns their data as one `Data` event (`decode` does the same from bytes in hand); it
accepts and rejects exactly what `ChunkedReader` does (the same header pattern, the
same errors, the same trailer and end-of-body handling, which it inherits).

`DirectChunkedBody` then reads such a body straight off the connection: one network
read, one decode, one piece of the body, and the end handed back to h11. It replaces
httpcore's body stream only for an HTTP/1.1 response whose chunked body has not been
touched yet (`read_chunks_directly`); anything else is read as before.

Touches: h11's private `ChunkedReader` (subclassed, its `_bytes_in_chunk`,
`_bytes_to_discard` and `_reading_trailer` state), `ReceiveBuffer`, `chunk_header_re`,
`LocalProtocolError` and `validate`; the h11 connection's `_reader` and
`_receive_buffer`; httpcore's pooled response stream (`_stream`), its HTTP/1.1 body
stream (`_connection`, `_request`) and connection (`_h11_state`, `_network_stream`,
`READ_NUM_BYTES`). `check()` looks for each with the type it was written for (h11 0.16:
in 0.14 `_bytes_to_discard` was a count, not the bytes); refused, bodies are read by
httpcore and h11 as they are. tests/test_bulk_chunks.py holds it equal to h11's reader.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import h11
import httpcore
from h11._readers import ChunkedReader, chunk_header_re
from h11._receivebuffer import ReceiveBuffer
from h11._util import LocalProtocolError, validate

_FOOTER = b"\r\n"


def check() -> str | None:
    from httpcore._async.connection_pool import PoolByteStream
    from httpcore._async.http11 import AsyncHTTP11Connection, HTTP11ConnectionByteStream

    reader = ChunkedReader()
    expected = {"_bytes_in_chunk": int, "_bytes_to_discard": bytes, "_reading_trailer": bool}
    for name, kind in expected.items():
        if not isinstance(getattr(reader, name, None), kind):
            return f"h11 ChunkedReader.{name} is not {kind.__name__}"
    connection = h11.Connection(h11.CLIENT)
    if not isinstance(getattr(connection, "_receive_buffer", None), ReceiveBuffer):
        return "h11 Connection has no _receive_buffer"
    if not hasattr(connection, "_reader") or not hasattr(ReceiveBuffer, "maybe_extract_at_most"):
        return "h11 Connection or ReceiveBuffer unlike expected"
    if not hasattr(chunk_header_re, "fullmatch") or not callable(validate):
        return "h11 chunk_header_re or validate unlike expected"
    for cls, names in (
        (PoolByteStream, {"_stream"}),
        (HTTP11ConnectionByteStream, {"_connection", "_request"}),
        (AsyncHTTP11Connection, {"_network_stream", "_h11_state"}),
    ):
        missing = names - set(cls.__init__.__code__.co_names)
        if missing:
            return f"httpcore {cls.__name__} sets no {', '.join(sorted(missing))}"
    if not isinstance(getattr(AsyncHTTP11Connection, "READ_NUM_BYTES", None), int):
        return "httpcore AsyncHTTP11Connection has no READ_NUM_BYTES"
    return None


# h11's words (`ChunkedReader.read_eof`) for a body that ends before its last chunk.
CUT_OFF = "peer closed connection without sending complete message body (incomplete chunked read)"


class BulkChunkedReader(ChunkedReader):
    """h11's `ChunkedReader`, merging the data of consecutive chunks into one event."""

    def __call__(self, buf: ReceiveBuffer) -> h11.Data | h11.EndOfMessage | None:
        if self._reading_trailer or not buf:
            return super().__call__(buf)
        # Everything buffered, once; what cannot be finished yet goes back at the end.
        data = bytes(buf.maybe_extract_at_most(len(buf)) or b"")
        parts, pos, fault = self.decode(data)
        if fault is not None and not parts:
            buf += data[pos:]
            raise fault
        if pos < len(data):
            buf += data[pos:]
        if parts:
            # The trailer, if it came too, is the next event (h11 asks again at once).
            return h11.Data(data=parts[0] if len(parts) == 1 else b"".join(parts))
        if self._reading_trailer:
            return super().__call__(buf)
        return None

    def decode(self, data: bytes) -> tuple[list[bytes], int, LocalProtocolError | None]:
        """The data of every chunk `data` completes, and how far it was read: up to the
        end, the last-chunk line (`_reading_trailer` is then set), a size line still on
        its way, or a fault (returned, not raised, so what came before it goes first;
        the fault's bytes are left unread, to be read again and raise)."""
        end = len(data)
        pos = 0
        parts: list[bytes] = []
        full_header = chunk_header_re.fullmatch
        try:
            while pos < end:
                discard = self._bytes_to_discard
                if discard:
                    seen = data[pos : pos + len(discard)]
                    if seen != discard[: len(seen)]:
                        raise LocalProtocolError(
                            f"malformed chunk footer: {bytearray(seen)!r} (expected {discard!r})"
                        )
                    self._bytes_to_discard = discard[len(seen) :]
                    pos += len(seen)
                    continue
                left = self._bytes_in_chunk
                if left:
                    taken = data[pos : pos + left]
                    parts.append(taken)
                    pos += len(taken)
                    left -= len(taken)
                    self._bytes_in_chunk = left
                    if not left:
                        self._bytes_to_discard = _FOOTER
                    continue
                line_end = data.find(b"\r\n", pos)
                if line_end < 0:
                    break  # the size line is still on its way
                header = data[pos : line_end + 2]
                match = full_header(header)
                if match is None:
                    # Raises, worded as h11 words it (it shows the bytearray it read).
                    bad = bytearray(header)
                    validate(chunk_header_re, header, "illegal chunk header: {!r}", bad)
                # Not None: `validate` raised above (h11 does not mark it as never returning).
                size = int(match["chunk_size"], base=16)  # type: ignore[index]
                start = line_end + 2
                if size == 0:
                    pos = start
                    self._reading_trailer = True
                    break
                stop = start + size
                if data[stop : stop + 2] == _FOOTER:
                    # The common case: the whole chunk and its CRLF are here.
                    parts.append(data[start:stop])
                    pos = stop + 2
                    continue
                pos = start
                self._bytes_in_chunk = size
        except LocalProtocolError as fault:
            return parts, pos, fault
        return parts, pos, None


class DirectChunkedBody:
    """The chunked body of one response, read straight off its connection's stream.

    Replaces httpcore's body stream (`HTTP11ConnectionByteStream`) under its pool's: per
    network read, one `read()` and one decode, without h11's state machine and httpcore's
    layers around each step (each read went through them twice: for the data, then to
    find none left). h11 is handed the end of the body, so it closes the response as it
    would have (a keep-alive connection goes back to the pool), and every failure is the
    one httpcore raises: `ReadTimeout`/`ReadError` from the stream, `RemoteProtocolError`
    with h11's words for a malformed or cut-off body. Closing (also on an error, which
    the pool's stream does shielded) is the replaced stream's own `aclose()`.
    """

    def __init__(self, inner: Any, connection: Any, state: h11.Connection) -> None:
        self._inner = inner
        self._connection = connection
        self.state = state
        # Iterated (or handed over to `pushed_body`): the body is someone's to read.
        self.started = False

    @property
    def network_stream(self) -> Any:
        return self._connection._network_stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self.started = True
        timeouts = self._inner._request.extensions.get("timeout", {})
        timeout = timeouts.get("read", None)
        stream = self._connection._network_stream
        size = self._connection.READ_NUM_BYTES
        buf = ReceiveBuffer()
        held = self.state._receive_buffer  # what came with the head: the body's start
        if held:
            buf += held.maybe_extract_at_most(len(held)) or b""
        reader = BulkChunkedReader()
        while True:
            try:
                event = reader(buf) if buf else None  # nothing to decode: read
            except LocalProtocolError as exc:
                raise httpcore.RemoteProtocolError(str(exc)) from exc
            if event is None:
                data = await stream.read(size, timeout=timeout)
                if not data:
                    raise httpcore.RemoteProtocolError(CUT_OFF)
                buf += data
            elif isinstance(event, h11.Data):
                yield bytes(event.data)
            else:
                self.end_for_h11(bytes(buf))
                return

    async def aclose(self) -> None:
        await self._inner.aclose()

    def end_for_h11(self, rest: bytes) -> None:
        # The last chunk (trailers are dropped, as httpcore drops them) and whatever
        # followed: h11 then ends the response itself. Should it not, the connection is
        # closed rather than reused, as for any response not read to its end.
        try:
            self.state.receive_data(b"0\r\n\r\n" + rest)
            self.state.next_event()
        except h11.RemoteProtocolError:
            pass


def read_chunks_directly(response: Any) -> DirectChunkedBody | None:
    """Give httpcore's `response` a `DirectChunkedBody`, if its body is chunked HTTP/1.1
    not yet touched; that body, or None if it could not.

    Reached through httpcore's and h11's own attributes (the versions are pinned, and a
    test checks that this still happens): a connection pool's response wraps the HTTP/1.1
    connection's body stream, whose h11 state holds the body's reader.
    """
    outer = response.stream
    inner = getattr(outer, "_stream", None)
    connection = getattr(inner, "_connection", None)
    state = getattr(connection, "_h11_state", None)
    if not isinstance(state, h11.Connection) or not hasattr(inner, "_request"):
        return None
    if not hasattr(connection, "_network_stream") or not hasattr(connection, "READ_NUM_BYTES"):
        return None
    reader = getattr(state, "_reader", None)
    # Only a reader of h11's own class that has not read a byte of the body yet.
    if (
        type(reader) is not ChunkedReader
        or reader._bytes_in_chunk
        or reader._bytes_to_discard
        or reader._reading_trailer
    ):
        return None
    body = outer._stream = DirectChunkedBody(inner, connection, state)
    return body
