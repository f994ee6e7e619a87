"""A front end that draws at a frame rate takes the stream in batches (`gather_s`).

Batches come no closer together than `gather_s` (by the loop's clock, whatever the
machine's speed), nothing is lost or reordered, and the wait gives way at once to the
end of the body and to an abort: neither waits out the gathering.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ink_tui import fastpaths
from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import ModelRequest, ReplyDone, TextChunk
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.scripted_server import Gate, Pause, Reply, ScriptedServer, chunk

DONE = "data: [DONE]\n\n"
REQUEST = ModelRequest("You are a test.", [UserMessage("hi")])


def content(text: str) -> str:
    return chunk({"content": text})


@pytest.fixture
async def gathering(server: ScriptedServer) -> AsyncIterator[OpenAICompatProvider]:
    client = OpenAICompatProvider(server.base_url, "test-model", "sk-test", gather_s=0.05)
    yield client
    await client.aclose()


async def test_batches_are_a_gathering_apart_and_lose_nothing(
    server: ScriptedServer, gathering: OpenAICompatProvider
) -> None:
    pieces = [f"w{n} " for n in range(60)]
    steps: list[object] = []
    for piece in pieces:
        steps += [content(piece), Pause(0.005)]
    server.push(Reply([*steps, chunk({}, "stop"), DONE]))  # type: ignore[list-item]
    loop = asyncio.get_running_loop()
    arrivals: list[tuple[float, str]] = []
    async for event in gathering.stream(REQUEST, AbortController().signal):
        if isinstance(event, TextChunk):
            arrivals.append((loop.time(), event.text))
    assert "".join(text for _, text in arrivals) == "".join(pieces)
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(arrivals)]
    # A batch per gathering, not one per write (60 writes 5 ms apart).
    assert len(arrivals) < len(pieces) / 2
    # The last batch may come sooner: the body's end does not wait.
    assert min(gaps[:-1]) >= 0.05 - 0.002


async def test_the_end_of_the_body_does_not_wait_out_the_gathering(
    server: ScriptedServer,
) -> None:
    client = OpenAICompatProvider(server.base_url, "test-model", "sk-test", gather_s=60)
    gate = Gate()
    server.push(Reply([content("first "), gate, content("last"), chunk({}, "stop"), DONE]))
    try:
        events = []
        stream = client.stream(REQUEST, AbortController().signal)
        events.append(await asyncio.wait_for(anext(stream), 10))
        gate.open()
        # The rest must come when the body ends, not 60 s after the first batch.
        async with asyncio.timeout(30):
            events += [event async for event in stream]
        text = "".join(e.text for e in events if isinstance(e, TextChunk))
        assert text == "first last"
        assert isinstance(events[-1], ReplyDone)
    finally:
        gate.open()
        await client.aclose()


async def test_an_abort_does_not_wait_out_the_gathering(server: ScriptedServer) -> None:
    client = OpenAICompatProvider(server.base_url, "test-model", "sk-test", gather_s=60)
    gate = Gate()
    server.push(Reply([content("first "), content("more "), gate, chunk({}, "stop"), DONE]))
    controller = AbortController()
    try:
        stream = client.stream(REQUEST, controller.signal)
        first = await asyncio.wait_for(anext(stream), 10)
        assert isinstance(first, TextChunk)
        waiting = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)
        controller.abort("user")
        with pytest.raises(AbortError):
            async with asyncio.timeout(30):
                await waiting
    finally:
        gate.open()
        await client.aclose()


async def test_the_socket_is_read_once_a_gathering_not_once_a_write(
    server: ScriptedServer, gathering: OpenAICompatProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between two batches the body's reading rests (and the lean transport leaves the
    socket unread): each read is a wake-up of the whole process."""
    from httpcore._backends.anyio import AnyIOStream

    from ink_tui.providers.lean_transport import LeanStream

    reads = 0
    for stream_class in (LeanStream, AnyIOStream):
        real_read = stream_class.read

        async def counted(
            self: object, *args: object, _real: Any = real_read, **kwargs: object
        ) -> bytes:
            nonlocal reads
            reads += 1
            return await _real(self, *args, **kwargs)

        monkeypatch.setattr(stream_class, "read", counted)
    pieces = [f"w{n} " for n in range(60)]
    steps: list[object] = []
    for piece in pieces:
        steps += [content(piece), Pause(0.005)]
    server.push(Reply([*steps, chunk({}, "stop"), DONE]))  # type: ignore[list-item]
    text = [
        event.text
        async for event in gathering.stream(REQUEST, AbortController().signal)
        if isinstance(event, TextChunk)
    ]
    assert "".join(text) == "".join(pieces)
    # 60 writes over 0.3 s: about a read per 0.05 s gathering (and a few for the
    # headers and the end), where reading as bytes come takes one a write.
    assert reads < len(pieces) / 2


@pytest.mark.skipif(
    not fastpaths.enabled("lean_transport"), reason="the socket is held on the lean transport"
)
async def test_after_a_small_batch_the_socket_rests_and_after_a_flood_it_is_read_on(
    server: ScriptedServer, gathering: OpenAICompatProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rest between batches saves wake-ups while writes are small; after a batch of
    `NAP_BELOW` or more the server sends faster than that helps, and a socket left
    unread would fill TCP's window and hold it back."""
    from ink_tui.providers import body
    from ink_tui.providers.lean_transport import LeanStream

    log: list[tuple[str, int]] = []
    real_take, real_hold = body.BodyReader._take, LeanStream.hold_reading

    def take(self: body.BodyReader) -> bytes:
        batch = real_take(self)
        log.append(("batch", len(batch)))
        return batch

    def hold(self: LeanStream, held: bool) -> None:
        log.append(("hold", held))
        real_hold(self, held)

    monkeypatch.setattr(body.BodyReader, "_take", take)
    monkeypatch.setattr(LeanStream, "hold_reading", hold)
    flood = "x" * (4 * body.NAP_BELOW)
    steps = [content("a"), Pause(0.01), content("b"), content(flood), Pause(0.2), content("c")]
    server.push(Reply([*steps, chunk({}, "stop"), DONE]))  # type: ignore[list-item]
    text = [
        event.text
        async for event in gathering.stream(REQUEST, AbortController().signal)
        if isinstance(event, TextChunk)
    ]
    assert "".join(text) == "ab" + flood + "c"
    batches = [n for n, (kind, _) in enumerate(log) if kind == "batch"]
    rested = [log[n] for n in batches[:-1] if log[n + 1] == ("hold", True)]
    read_on = [log[n] for n in batches[:-1] if log[n + 1] != ("hold", True)]
    assert rested and all(size < body.NAP_BELOW for _, size in rested), log
    assert read_on and all(size >= body.NAP_BELOW for _, size in read_on), log
