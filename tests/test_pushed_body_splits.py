"""`PushedBody.data`, which decodes a read straight from its bytes when nothing is held
from the read before, hands its sink the bytes, the end and the error h11's own chunked
reader gives, however the reads fall (Hypothesis: any chunks, trailer or none, a fault
anywhere)."""

from __future__ import annotations

import itertools
from typing import Any

import h11
import httpx
from h11._readers import ChunkedReader
from h11._receivebuffer import ReceiveBuffer
from hypothesis import given
from hypothesis import strategies as st

from ink_tui.fastpaths.pushed_body import PushedBody

FAULTS = [b"", b"zz\r\n", b"4\r\nabcdXY", b"0x4\r\nabcd\r\n"]


class _Sink:
    def __init__(self) -> None:
        self.data = bytearray()
        self.end: tuple[str, str] | None = None

    def body_data(self, data: bytes) -> None:
        assert self.end is None
        self.data += data

    def body_end(self, error: Exception | None) -> None:
        self.end = ("end", "") if error is None else (type(error).__name__, str(error))


class _Protocol:
    def undivert(self) -> None:
        pass


class _Stream:
    protocol = _Protocol()


class _Body:
    def end_for_h11(self, rest: bytes) -> None:
        pass


def pushed(wire: bytes, bounds: list[int]) -> tuple[bytes, tuple[str, str] | None]:
    body: Any = _Body()
    stream: Any = _Stream()
    sink = _Sink()
    reader = PushedBody(body, stream, httpx.Request("GET", "http://127.0.0.1/"))
    reader._sink = sink
    for start, end in itertools.pairwise(bounds):
        if reader.finished:
            break  # the protocol's reads are its own again (`undivert`)
        reader.data(wire[start:end])
    return bytes(sink.data), sink.end


def h11s(wire: bytes, bounds: list[int]) -> tuple[bytes, tuple[str, str] | None]:
    reader = ChunkedReader()
    buf = ReceiveBuffer()
    data = bytearray()
    for start, end in itertools.pairwise(bounds):
        buf += wire[start:end]
        while buf:
            try:
                event = reader(buf)
            except h11.LocalProtocolError as exc:
                return bytes(data), ("RemoteProtocolError", str(exc))
            if event is None:
                break
            if isinstance(event, h11.EndOfMessage):
                return bytes(data), ("end", "")
            assert isinstance(event, h11.Data)
            data += event.data
    return bytes(data), None


@given(
    pieces=st.lists(st.binary(max_size=30), max_size=10),
    trailer=st.sampled_from([b"", b"X-Checksum: 1\r\n"]),
    fault=st.sampled_from(FAULTS),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=10),
)
def test_any_reads_give_the_sink_what_h11_gives(
    pieces: list[bytes], trailer: bytes, fault: bytes, cuts: list[int]
) -> None:
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces if piece)
    wire = chunks + (fault or b"0\r\n" + trailer + b"\r\n")
    bounds = [0, *sorted({cut for cut in cuts if 0 < cut < len(wire)}), len(wire)]
    assert pushed(wire, bounds) == h11s(wire, bounds)
