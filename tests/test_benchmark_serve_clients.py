"""Figure 11's SSE clients read the stream off the socket themselves: the chunked body
and the SSE blocks must come out whole however the network splits the bytes."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.serve_clients import StreamClient, _Wire


def sse(seq: int, kind: str, data: dict[str, object]) -> bytes:
    return f"id: {seq}\nevent: {kind}\ndata: {json.dumps(data)}\n\n".encode()


BLOCKS = [
    sse(1, "agent_start", {"type": "agent_start"}),
    b": keep-alive\n\n",
    sse(2, "message_update", {"delta": {"text": "<t=12.500000>abcd"}}),
    sse(3, "message_update", {"delta": {"text": "efg<t=12.520000>hij"}}),
    sse(4, "agent_settled", {"type": "agent_settled", "stop_reason": "completed"}),
]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def wire_bytes(blocks: list[bytes]) -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(block), block) for block in blocks)
    return HEAD + body + b"0\r\n\r\n"


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=len(wire_bytes(BLOCKS)) - 1)))
async def test_any_split_of_the_bytes_reads_the_same(cuts: list[int]) -> None:
    data = wire_bytes(BLOCKS)
    reader = StreamClient("s1")
    wire = _Wire(reader)
    edges = [0, *sorted(set(cuts)), len(data)]
    for start, end in itertools.pairwise(edges):
        wire.data_received(data[start:end])
    assert wire.headers.done() and wire.headers.exception() is None
    assert [sent for _, sent in reader.stamps] == [12.5, 12.52]
    assert reader.messages == 4
    assert reader.settled == {"type": "agent_settled", "stop_reason": "completed"}
    assert wire.ended.done()


async def test_a_refused_stream_is_an_error_not_a_silent_empty_one() -> None:
    reader = StreamClient("s1")
    wire = _Wire(reader)
    wire.data_received(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
    assert isinstance(wire.headers.exception(), RuntimeError)
