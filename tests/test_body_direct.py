"""A chunked body on the lean transport is read by the consumer itself (body.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import ModelRequest, ReplyDone, TextChunk
from ink_tui.providers import body
from ink_tui.providers.bulk_chunks import DirectChunkedBody
from ink_tui.providers.openai_compat import OpenAICompatProvider
from ink_tui.providers.reply_assembly import Pieces
from tests.scripted_server import Gate, Reply, ScriptedServer, chunk, text_reply


@pytest.fixture
async def provider(server: ScriptedServer) -> AsyncIterator[OpenAICompatProvider]:
    client = OpenAICompatProvider(
        server.base_url, "test-model", "sk-test", base_delay=0.001, max_delay=0.005
    )
    yield client
    await client.aclose()


@pytest.fixture
def bodies(monkeypatch: pytest.MonkeyPatch) -> list[DirectChunkedBody | None]:
    """What `BodyReader` found to read directly, one entry per response."""
    found: list[DirectChunkedBody | None] = []
    original = body._direct_body

    def spy(response: object) -> DirectChunkedBody | None:
        result = original(response)  # type: ignore[arg-type]
        found.append(result)
        return result

    monkeypatch.setattr(body, "_direct_body", spy)
    return found


async def test_a_streamed_reply_is_read_directly(
    server: ScriptedServer, provider: OpenAICompatProvider, bodies: list[DirectChunkedBody | None]
) -> None:
    server.push(text_reply("read by the consumer, a network read at a time", pieces=7))
    request = ModelRequest("You are a test.", [UserMessage("hi")])
    events = [event async for event in provider.stream(request, AbortController().signal)]
    text = "".join(event.text for event in events if isinstance(event, TextChunk))
    assert text == "read by the consumer, a network read at a time"
    assert isinstance(events[-1], ReplyDone)
    assert len(bodies) == 1 and bodies[0] is not None


async def test_an_abort_hangs_up_while_the_consumer_is_elsewhere(
    server: ScriptedServer, provider: OpenAICompatProvider, bodies: list[DirectChunkedBody | None]
) -> None:
    gate = Gate()
    server.push(Reply([chunk({"content": "first"}), gate, chunk({"content": "never"}, "stop")]))
    controller = AbortController()
    request = ModelRequest("You are a test.", [UserMessage("hi")])
    stream = provider.stream(request, controller.signal)
    first = await anext(stream)
    assert isinstance(first, TextChunk) and first.text == "first"
    direct = bodies[0]
    assert direct is not None
    # The consumer is not reading now; the abort alone must drop the connection.
    controller.abort()
    assert direct.network_stream._transport.is_closing()
    with pytest.raises(AbortError):
        await asyncio.wait_for(anext(stream), 5)
    gate.open()
    await stream.aclose()


def test_pieces_keep_the_text_in_order_in_few_strings() -> None:
    pieces = Pieces()
    words = [f"w{n} " for n in range(Pieces.GROUP * 3 + 17)]
    for word in words:
        pieces.append(word)
    assert pieces.text() == "".join(words)
    assert len(pieces._groups) == 3 and len(pieces._recent) == 17


@pytest.mark.parametrize(
    ("data", "whole_only"),
    [
        (b"5\r\nhello\r\n", True),
        (b"5\r\nhello\r\n3;ext=1\r\nabc\r\n", True),
        (b"A\r\n0123456789\r\n", True),
        (b"5\r\nhel", False),  # a partial chunk
        (b"5\r\nhello\r\n0\r\n\r\n", False),  # the last chunk
        (b"zz\r\nab\r\n", False),  # malformed
        (b"3\r\nabcXY", False),  # a bad footer
    ],
)
def test_whole_chunks_decode_as_the_reader_does(data: bytes, whole_only: bool) -> None:
    from h11._receivebuffer import ReceiveBuffer

    from ink_tui.providers.bulk_chunks import BulkChunkedReader, _whole_chunks

    whole = _whole_chunks(data)
    assert (whole is not None) == whole_only
    if whole is None:
        return  # left to the reader
    buf = ReceiveBuffer()
    buf += data
    event = BulkChunkedReader()(buf)
    assert event is not None and bytes(event.data) == b"".join(whole)  # type: ignore[union-attr]
    assert not buf
    assert whole != [] and all(whole)
