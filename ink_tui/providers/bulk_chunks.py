"""A chunked-body reader for h11 that hands over one network read's worth of chunks at once.

A model server streams each SSE event in an HTTP chunk of its own, so a fast reply is tens
of thousands of chunks. h11's own `ChunkedReader` makes each of them an event, and each
event is then a trip through h11's state machine, httpcore's body iterator, httpx's and
the provider's: about 20 µs per chunk, more than everything the provider does with the
event. `BulkChunkedReader` decodes every complete chunk in the buffer in one go and
returns their data as one `Data` event, so those trips happen per read, not per chunk.

It accepts and rejects exactly what `ChunkedReader` does (the same header pattern, the
same errors, the same trailer and end-of-body handling, which it inherits), and it
replaces the reader only on an HTTP/1.1 connection of httpcore's whose response body
has not been touched yet (`use_bulk_chunks`); anything else is left as it was.
"""

from __future__ import annotations

from typing import Any

import h11
from h11._readers import ChunkedReader, chunk_header_re
from h11._receivebuffer import ReceiveBuffer
from h11._util import LocalProtocolError, validate

_FOOTER = b"\r\n"


class BulkChunkedReader(ChunkedReader):
    """h11's `ChunkedReader`, merging the data of consecutive chunks into one event."""

    def __call__(self, buf: ReceiveBuffer) -> h11.Data | h11.EndOfMessage | None:
        if self._reading_trailer or not buf:
            return super().__call__(buf)
        # Everything buffered, once; what cannot be finished yet goes back at the end.
        data = bytes(buf.maybe_extract_at_most(len(buf)) or b"")
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
                    bad = bytearray(header)  # worded as h11 words it
                    validate(chunk_header_re, bad, "illegal chunk header: {!r}", bad)
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
        except LocalProtocolError:
            if not parts:
                buf += data[pos:]
                raise
            # What came before the fault is handed over first, as h11 does (its reader
            # stops at every chunk); the fault stays in the buffer for the next call.
        if pos < end:
            buf += data[pos:]
        if parts:
            # The trailer, if it came too, is the next event (h11 asks again at once).
            return h11.Data(data=parts[0] if len(parts) == 1 else b"".join(parts))
        if self._reading_trailer:
            return super().__call__(buf)
        return None


def use_bulk_chunks(response: Any) -> bool:
    """Give the body of httpcore's `response` the bulk reader; whether it could be.

    Reached through httpcore's and h11's own attributes (the versions are pinned, and a
    test checks that this still happens): a connection pool's response wraps the HTTP/1.1
    connection's body stream, whose h11 state holds the body's reader.
    """
    inner = getattr(response.stream, "_stream", None)
    connection = getattr(inner, "_connection", None)
    state = getattr(connection, "_h11_state", None)
    if not isinstance(state, h11.Connection):
        return False
    reader = getattr(state, "_reader", None)
    # Only a reader of h11's own class that has not read a byte of the body yet.
    if (
        type(reader) is not ChunkedReader
        or reader._bytes_in_chunk
        or reader._bytes_to_discard
        or reader._reading_trailer
    ):
        return False
    state._reader = BulkChunkedReader()
    return True
