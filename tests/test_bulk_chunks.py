"""The bulk chunked-body reader: the same bytes, errors and end as h11's own, fewer events."""

from __future__ import annotations

import asyncio
import itertools

import h11
import httpx
import pytest
from h11._readers import ChunkedReader
from h11._receivebuffer import ReceiveBuffer
from hypothesis import given
from hypothesis import strategies as st

from ink_tui.fastpaths.h11_chunks import (
    BulkChunkedReader,
    DirectChunkedBody,
    read_chunks_directly,
)
from ink_tui.providers.lean_transport import LeanHTTPTransport
from tests.fastpath_helpers import needs_fast_path
from tests.raw_http_server import serve, writing
from tests.scripted_server import Reply, ScriptedServer


def _chunked(pieces: list[bytes], trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces if piece)
    return body + b"0\r\n" + trailer + b"\r\n"


def _read(reader: ChunkedReader, wire: bytes, cuts: list[int]) -> tuple[bytes, list[object]]:
    """Feed `wire` split at `cuts`; the body, and every event (or error) in order."""
    buf = ReceiveBuffer()
    data = bytearray()
    seen: list[object] = []
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(wire)}), len(wire)]
    for start, end in itertools.pairwise(bounds):
        buf += wire[start:end]
        while True:
            try:
                event = reader(buf)
            except h11.LocalProtocolError as exc:
                seen.append(("error", str(exc)))
                return bytes(data), seen
            if event is None:
                break
            if isinstance(event, h11.Data):
                data += event.data
                seen.append("data")
            else:
                assert isinstance(event, h11.EndOfMessage)
                seen.append(("end", event.headers))
                return bytes(data), seen
    seen.append(("left", bytes(buf)))
    return bytes(data), seen


def _outcome(seen: list[object]) -> list[object]:
    return [item for item in seen if item != "data"]


@given(
    pieces=st.lists(st.binary(min_size=0, max_size=40), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=800), max_size=12),
    trailer=st.sampled_from([b"", b"X-Checksum: 1\r\n"]),
)
def test_any_split_gives_the_bytes_and_the_end_h11_gives(
    pieces: list[bytes], cuts: list[int], trailer: bytes
) -> None:
    wire = _chunked(pieces, trailer)
    ours = _read(BulkChunkedReader(), wire, cuts)
    theirs = _read(ChunkedReader(), wire, cuts)
    assert ours[0] == theirs[0] == b"".join(pieces)
    assert _outcome(ours[1]) == _outcome(theirs[1])


@pytest.mark.parametrize(
    "wire",
    [
        b"4\r\nabcdXY",  # a chunk without its CRLF
        b"zz\r\nabcd\r\n",  # not a hexadecimal size
        b"0x4\r\nabcd\r\n0\r\n\r\n",  # a size `int(.., 16)` would take, the grammar not
        b"4\r\nab",  # cut off inside a chunk: waits for more
        b"4\r\nabcd\r\n2",  # cut off inside a size line
    ],
)
@pytest.mark.parametrize("cut", [0, 1, 3, 6, 9])
def test_malformed_or_cut_bodies_end_as_with_h11(wire: bytes, cut: int) -> None:
    ours = _read(BulkChunkedReader(), wire, [cut])
    theirs = _read(ChunkedReader(), wire, [cut])
    assert ours[0] == theirs[0]
    assert _outcome(ours[1]) == _outcome(theirs[1])


def test_one_read_of_many_chunks_is_one_event() -> None:
    wire = _chunked([b"data: %d\n\n" % n for n in range(500)])
    data, seen = _read(BulkChunkedReader(), wire, [])
    assert seen.count("data") == 1
    assert data == b"".join(b"data: %d\n\n" % n for n in range(500))
    assert seen[-1] == ("end", [])


@needs_fast_path("bulk_chunks")
async def test_the_lean_transport_reads_chunked_bodies_in_bulk(server: ScriptedServer) -> None:
    """httpcore's and h11's attributes that `read_chunks_directly` reaches are still there."""
    pieces = [f"piece {n}\n" for n in range(50)]
    server.push(Reply(list(pieces)))
    seen: list[bool] = []
    transport = LeanHTTPTransport()
    pool = transport._pool
    original = pool.handle_async_request

    async def spy(request: object) -> object:
        response = await original(request)  # type: ignore[arg-type]
        seen.append(isinstance(response.stream._stream, DirectChunkedBody))  # type: ignore[attr-defined]
        return response

    pool.handle_async_request = spy  # type: ignore[method-assign]
    async with (
        httpx.AsyncClient(transport=transport) as client,
        client.stream("POST", f"{server.base_url}/chat/completions") as response,
    ):
        body = b"".join([part async for part in response.aiter_raw()])
    assert body.decode() == "".join(pieces)
    assert seen == [True]


def test_a_reader_already_in_a_body_is_left_alone() -> None:
    class Fake:
        pass

    response = Fake()
    response.stream = Fake()  # type: ignore[attr-defined]
    assert read_chunks_directly(response) is None


async def _raw_server(reply: bytes, *, hang_up: bool = False) -> tuple[asyncio.Server, str]:
    return await serve(writing(reply, hang_up=hang_up))


_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


async def _body(url: str, client: httpx.AsyncClient) -> bytes:
    async with client.stream("GET", f"{url}/") as response:
        return b"".join([part async for part in response.aiter_raw()])


@needs_fast_path("bulk_chunks")
async def test_a_connection_read_directly_is_reused() -> None:
    server, url = await _raw_server(_HEAD + _chunked([b"one ", b"two"], b"X-Trailer: 1\r\n"))
    transport = LeanHTTPTransport()
    async with server, httpx.AsyncClient(transport=transport) as client:
        assert await _body(url, client) == b"one two"
        first = list(transport._pool.connections)
        assert await _body(url, client) == b"one two"
        assert len(first) == 1 and transport._pool.connections == first
        assert first[0].is_idle()


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"4\r\nabcdXY", "malformed chunk footer"),
        (b"zz\r\nabcd\r\n", "illegal chunk header"),
        (b"4\r\nabcd\r\n8\r\nab", "incomplete chunked read"),
    ],
)
async def test_a_bad_body_fails_as_httpcore_fails_it(body: bytes, words: str) -> None:
    server, url = await _raw_server(_HEAD + body, hang_up=True)
    transport = LeanHTTPTransport()
    async with server, httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx.RemoteProtocolError, match=words):
            await _body(url, client)
        assert all(connection.is_closed() for connection in transport._pool.connections)
