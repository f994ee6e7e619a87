"""The Anthropic provider when things go wrong: rate limits and overload retried with the
server's wait, refusals with the server's words, malformed and cut streams named as such
(the same messages as the OpenAI client), an error event mid-stream, and an abort that
hangs up on the server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    RetryScheduled,
    StreamEvent,
    TextChunk,
)
from ink_tui.providers.anthropic import AnthropicProvider
from tests.run_helpers import wait_gate
from tests.scripted_anthropic_server import (
    ScriptedAnthropicServer,
    block_start,
    delta,
    error_event,
    error_reply,
    event,
    message_end,
    message_start,
    text_reply,
)
from tests.scripted_server import Drop, Gate, Pause, Reply

PORTAL = (
    "<!DOCTYPE html><html><head><title>Hotel Wi-Fi: sign in</title></head>"
    "<body><h1>Welcome</h1><p>Accept the terms to get online.</p></body></html>"
)


@pytest.fixture
def anthropic() -> Iterator[ScriptedAnthropicServer]:
    server = ScriptedAnthropicServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def provider(anthropic: ScriptedAnthropicServer) -> AsyncIterator[AnthropicProvider]:
    client = AnthropicProvider(
        anthropic.base_url, "claude-test", "sk-ant-secret", base_delay=0.001, max_delay=0.005
    )
    yield client
    await client.aclose()


async def collect(provider: AnthropicProvider) -> tuple[list[StreamEvent], Exception | None]:
    events: list[StreamEvent] = []
    try:
        request = ModelRequest("sys", [UserMessage("hi")])
        async for item in provider.stream(request, AbortController().signal):
            events.append(item)
    except ProviderError as exc:
        return events, exc
    return events, None


def retries(events: list[StreamEvent]) -> list[RetryScheduled]:
    return [e for e in events if isinstance(e, RetryScheduled)]


async def test_429_is_retried_after_the_servers_retry_after(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(
        error_reply(429, "rate_limit_error", "Number of requests exceeded", {"retry-after": "0.3"}),
        text_reply("after the wait"),
    )
    started = time.monotonic()
    events, error = await collect(provider)
    assert error is None
    [retry] = retries(events)
    assert retry.delay == pytest.approx(0.3)
    assert "HTTP 429" in retry.reason and "Number of requests exceeded" in retry.reason
    assert time.monotonic() - started >= 0.3
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "after the wait"
    assert len(anthropic.requests) == 2


async def test_529_overloaded_is_retried_then_given_up_with_the_servers_words(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(*[error_reply(529, "overloaded_error", "Overloaded") for _ in range(3)])
    events, error = await collect(provider)
    assert isinstance(error, ProviderError)
    assert str(error).startswith("gave up after 3 attempts: HTTP 529")
    assert "Overloaded" in str(error)
    assert len(retries(events)) == 2 and len(anthropic.requests) == 3


async def test_400_says_what_the_api_said_and_is_not_retried(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(error_reply(400, "invalid_request_error", "max_tokens: field required"))
    events, error = await collect(provider)
    assert isinstance(error, ProviderError) and error.status == 400
    assert "HTTP 400" in str(error) and "max_tokens: field required" in str(error)
    assert "/v1/messages" in str(error)
    assert not retries(events) and len(anthropic.requests) == 1


async def test_the_api_key_never_shows_in_an_error(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(error_reply(401, "authentication_error", "invalid x-api-key: sk-ant-secret"))
    _, error = await collect(provider)
    assert isinstance(error, ProviderError)
    assert "sk-ant-secret" not in str(error) and "***" in str(error)


@pytest.mark.parametrize(
    ("reply", "said", "attempts"),
    [
        pytest.param(
            lambda: Reply([PORTAL], headers={"Content-Type": "text/html"}),
            "the server answered with an HTML page titled 'Hotel Wi-Fi: sign in'",
            1,
            id="html-page",
        ),
        pytest.param(
            lambda: Reply(['{"foo": 1}'], headers={"Content-Type": "application/json"}),
            'a JSON object that is not a Messages API event: {"foo": 1}',
            1,
            id="wrong-json",
        ),
        pytest.param(
            lambda: Reply([event("surprise", {"n": 1})]),
            "a JSON object that is not a Messages API event",
            1,
            id="event-of-no-known-type",
        ),
        pytest.param(
            lambda: Reply(["data: {not json\n\n"]),
            "sent an event that is not valid JSON",
            1,
            id="event-not-json",
        ),
        pytest.param(
            lambda: Reply([]), "the server answered 200 with an empty body", 3, id="empty-body"
        ),
        pytest.param(
            lambda: Reply([message_start(), Pause(0.05), Drop()]),
            "the stream ended before the model finished",
            3,
            id="cut-before-any-text",
        ),
        pytest.param(
            lambda: Reply([error_event("overloaded_error", "Overloaded")]),
            "/v1/messages: overloaded_error: Overloaded",
            3,
            id="overloaded-event-before-text",
        ),
    ],
)
async def test_malformed_replies_fail_saying_what_came(
    reply: object,
    said: str,
    attempts: int,
    anthropic: ScriptedAnthropicServer,
    provider: AnthropicProvider,
) -> None:
    assert callable(reply)
    anthropic.push(*[reply() for _ in range(attempts)])
    _, error = await collect(provider)
    assert isinstance(error, ProviderError), error
    assert said in str(error)
    assert len(anthropic.requests) == attempts
    if attempts > 1:
        assert str(error).startswith(f"gave up after {attempts} attempts")


def half_answer(*tail: object) -> Reply:
    steps = [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "Half an ans"}),
        Pause(0.05),
        *tail,
    ]
    return Reply(steps)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tail", "said"),
    [
        pytest.param(
            (Drop(),), "the stream ended before the model finished: the connection", id="drop"
        ),
        pytest.param(
            (),
            "the stream ended before the model finished: the server closed the stream "
            "without message_stop",
            id="ended-without-message-stop",
        ),
        pytest.param(
            (message_end("end_turn")[0],),
            "the stream ended before the model finished: the server closed the stream "
            "without message_stop",
            id="stop-reason-but-no-message-stop",
        ),
        pytest.param(
            (error_event("overloaded_error", "Overloaded"),),
            "overloaded_error: Overloaded (part of the reply had already arrived, so it was "
            "not retried)",
            id="error-event-mid-stream",
        ),
        pytest.param(
            (error_event("invalid_request_error", "bad things"),),
            "invalid_request_error: bad things",
            id="fatal-error-event-mid-stream",
        ),
    ],
)
async def test_a_cut_answer_keeps_its_text_and_is_not_retried(
    tail: tuple[object, ...],
    said: str,
    anthropic: ScriptedAnthropicServer,
    provider: AnthropicProvider,
) -> None:
    anthropic.push(half_answer(*tail))
    events, error = await collect(provider)
    assert isinstance(error, ProviderError)
    assert said in str(error)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Half an ans"
    assert not any(isinstance(e, ReplyDone) for e in events)
    assert len(anthropic.requests) == 1


async def test_abort_mid_stream_hangs_up_on_the_server(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    gate = Gate()
    anthropic.push(text_reply("a long answer that never ends", gate=gate))
    controller = AbortController()
    shown = asyncio.Event()

    async def consume() -> None:
        request = ModelRequest("sys", [UserMessage("hi")])
        async for item in provider.stream(request, controller.signal):
            if isinstance(item, TextChunk):
                shown.set()

    task = asyncio.create_task(consume())
    await wait_gate(gate)
    await asyncio.wait_for(shown.wait(), 2)
    started = time.monotonic()
    controller.abort()
    with pytest.raises(AbortError):
        await asyncio.wait_for(task, 2)
    assert time.monotonic() - started < 0.5
    assert await asyncio.to_thread(anthropic.disconnected.wait, 2)
    assert anthropic.disconnects == [0]
