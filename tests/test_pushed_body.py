"""The pushed body (`fastpaths.pushed_body`): the bytes, the end and the errors a body
read through httpx gives, with no reading task, and the connection kept or dropped as
httpcore would."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.fastpaths.pushed_body import PushedBody
from ink_tui.providers.body import BodyReader
from ink_tui.providers.lean_transport import LeanHTTPTransport
from tests.fastpath_helpers import needs_fast_path
from tests.raw_http_server import CHUNKED_HEAD as _HEAD
from tests.raw_http_server import chunked as _chunked
from tests.raw_http_server import serve as _server
from tests.raw_http_server import writing as _writing

pytestmark = needs_fast_path("pushed_body")


async def _read_all(client: httpx.AsyncClient, url: str) -> tuple[bytes, BodyReader]:
    async with (
        client.stream("GET", f"{url}/") as response,
        BodyReader(response, AbortController().signal) as body,
    ):
        pieces = []
        while (piece := await body.read(5.0)) is not None:
            pieces.append(piece)
            names = {task.get_name() for task in asyncio.all_tasks()}
            assert "ink-provider-body" not in names
        return b"".join(pieces), body


@pytest.mark.parametrize("step", [0, 1, 3, 7])
async def test_a_body_comes_whole_however_its_writes_fall(step: int) -> None:
    pieces = [b"data: one\n\n", b"data: two\n\n", b"x" * 300, b"end"]
    server, url = await _server(_writing(_HEAD + _chunked(pieces, b"X-T: 1\r\n"), step=step))
    transport = LeanHTTPTransport()
    async with server, httpx.AsyncClient(transport=transport) as client:
        data, body = await _read_all(client, url)
        assert body._pushed is not None
        # Taken: a second reader (httpx's own iterators) would not get it too.
        assert body._response.extensions["ink_direct_body"].started
        assert data == b"".join(pieces)
        # The end went to h11: the connection is back in the pool and is used again.
        first = list(transport._pool.connections)
        assert len(first) == 1 and first[0].is_idle()
        again, _ = await _read_all(client, url)
        assert again == data and transport._pool.connections == first


@pytest.mark.parametrize(
    ("wire", "before", "words"),
    [
        (b"4\r\nabcdXY", b"abcd", "malformed chunk footer"),
        (b"zz\r\nabcd\r\n", b"", "illegal chunk header"),
        (b"4\r\nabcd\r\n8\r\nab", b"abcdab", "incomplete chunked read"),
    ],
)
async def test_a_bad_body_fails_as_through_httpx(wire: bytes, before: bytes, words: str) -> None:
    server, url = await _server(_writing(_HEAD + wire, hang_up=True))
    transport = LeanHTTPTransport()
    async with server, httpx.AsyncClient(transport=transport) as client:
        got = b""
        with pytest.raises(httpx.RemoteProtocolError, match=words):
            async with (
                client.stream("GET", f"{url}/") as response,
                BodyReader(response, AbortController().signal) as body,
            ):
                assert body._pushed is not None
                while (piece := await body.read(5.0)) is not None:
                    got += piece
        # What came before the fault was read first; the connection is not kept.
        assert got == before
        assert all(connection.is_closed() for connection in transport._pool.connections)


async def test_stopping_before_the_end_hangs_up_at_once() -> None:
    hung_up = asyncio.Event()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(_HEAD + b"5\r\nfirst\r\n")
        await writer.drain()
        # Nothing more: the client's hang-up ends the read.
        if await reader.read() == b"":
            hung_up.set()
        writer.close()

    server, url = await _server(answer)
    controller = AbortController()
    async with (
        server,
        httpx.AsyncClient(transport=LeanHTTPTransport()) as client,
        client.stream("GET", f"{url}/") as response,
        BodyReader(response, controller.signal) as body,
    ):
        assert await body.read(5.0) == b"first"
        waiting = asyncio.ensure_future(body.read(30.0))
        await asyncio.sleep(0)
        controller.abort("stop")
        # The server sees the hang-up before anything else closes the response.
        await asyncio.wait_for(hung_up.wait(), 5.0)
        with pytest.raises(AbortError):
            await waiting


async def test_a_slow_reader_pauses_the_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    from ink_tui.providers import body as body_module

    monkeypatch.setattr(body_module, "READ_AHEAD", 1000)
    monkeypatch.setattr(body_module, "READ_MORE", 500)
    pieces = [b"%04d" % n * 25 for n in range(200)]  # 100 bytes each, 20 KB in all
    finish = asyncio.Event()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(_HEAD + _chunked(pieces)[: -len(b"0\r\n\r\n")])
        await writer.drain()
        await finish.wait()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    paused = asyncio.Event()
    reading = PushedBody.reading

    def spy(self: PushedBody, wanted: bool) -> None:
        reading(self, wanted)
        if not wanted and not self._stream.protocol.reading:
            paused.set()

    monkeypatch.setattr(PushedBody, "reading", spy)
    server, url = await _server(answer)
    got = []
    async with (
        server,
        httpx.AsyncClient(transport=LeanHTTPTransport()) as client,
        client.stream("GET", f"{url}/") as response,
        BodyReader(response, AbortController().signal) as body,
    ):
        # Nothing taken: the socket's reading pauses once the read-ahead is full.
        await asyncio.wait_for(paused.wait(), 5.0)
        finish.set()
        while (piece := await body.read(5.0)) is not None:
            assert len(piece) <= 1500
            got.append(piece)
    assert b"".join(got) == b"".join(pieces)
