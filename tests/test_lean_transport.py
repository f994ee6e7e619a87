"""The lean network backend under httpx (plain-HTTP providers), over real loopback sockets."""

from __future__ import annotations

import asyncio
import gzip
import socket

import httpx
import pytest

from ink_tui.core.abort import AbortController
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import ModelRequest, ReplyDone, TextChunk
from ink_tui.providers.lean_transport import LeanBackend, LeanHTTPTransport
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.fastpath_helpers import needs_fast_path
from tests.scripted_server import Pause, Reply, ScriptedServer, chunk, text_reply


async def _text(provider: OpenAICompatProvider) -> str:
    request = ModelRequest("You are a test.", [UserMessage("hi")])
    parts: list[str] = []
    async for event in provider.stream(request, AbortController().signal):
        if isinstance(event, TextChunk):
            parts.append(event.text)
        elif isinstance(event, ReplyDone):
            assert event.message.text == "".join(parts)
    return "".join(parts)


@needs_fast_path("lean_transport")
async def test_http_providers_use_it_and_https_ones_keep_httpx_own() -> None:
    plain = OpenAICompatProvider("http://127.0.0.1:9/v1", "m", None)
    secure = OpenAICompatProvider("https://example.invalid/v1", "m", None)
    try:
        assert isinstance(plain._client._transport, LeanHTTPTransport)
        assert not isinstance(secure._client._transport, LeanHTTPTransport)
        # httpx's transport methods work on `_pool` alone: an httpx that changes that
        # breaks every request here, not silently.
        assert isinstance(LeanHTTPTransport()._pool, type(httpx.AsyncHTTPTransport()._pool))
    finally:
        await plain.aclose()
        await secure.aclose()


async def test_replies_in_a_row_share_or_replace_the_connection(server: ScriptedServer) -> None:
    server.push(text_reply("first reply"), text_reply("second reply"), text_reply("third"))
    provider = OpenAICompatProvider(server.base_url, "m", None)
    try:
        assert [await _text(provider) for _ in range(3)] == [
            "first reply",
            "second reply",
            "third",
        ]
    finally:
        await provider.aclose()


async def test_a_compressed_stream_is_still_decoded(server: ScriptedServer) -> None:
    body = gzip.compress(
        (chunk({"content": "packed "}) + chunk({"content": "text"}, finish="stop")).encode()
        + b"data: [DONE]\n\n"
    )
    third = len(body) // 3
    pieces: list[bytes | str] = [body[:third], body[third : 2 * third], body[2 * third :]]
    headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
    server.push(Reply(list(pieces), headers=headers))
    provider = OpenAICompatProvider(server.base_url, "m", None)
    try:
        assert await _text(provider) == "packed text"
    finally:
        await provider.aclose()


async def test_a_silent_server_is_a_read_timeout(server: ScriptedServer) -> None:
    server.push(Reply([chunk({"content": "hi"}), Pause(2.0)]))
    timeout = httpx.Timeout(5.0, read=0.2)
    client = httpx.AsyncClient(transport=LeanHTTPTransport(), timeout=timeout)
    async with client, client.stream("POST", f"{server.base_url}/chat/completions") as response:
        with pytest.raises(httpx.ReadTimeout):
            async for _ in response.aiter_raw():
                pass


async def test_nothing_listening_is_a_connect_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free once closed: nothing listens there
    async with httpx.AsyncClient(transport=LeanHTTPTransport()) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/v1/models")


async def test_a_read_takes_at_most_what_httpcore_asks_for() -> None:
    """A read is one batch of the body downstream: never more than `max_bytes` (as with
    anyio), even when the socket brought far more at once."""
    sent = bytes(range(256)) * 2048  # 512 KB, written in one go

    async def answer(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(sent)
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        stream = await LeanBackend().connect_tcp("127.0.0.1", port, timeout=5)
        await asyncio.sleep(0.2)  # let it all arrive: the buffer holds far more than a read
        received: list[bytes] = []
        while data := await stream.read(65536, timeout=5):
            assert len(data) <= 65536
            received.append(data)
        await stream.aclose()
    assert b"".join(received) == sent
