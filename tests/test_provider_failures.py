"""How the provider fails, retries and stops: HTTP errors, dead connections, aborts."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from ink_tui.core.abort import AbortController, AbortError, AbortSignal
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    RetryScheduled,
    StreamEvent,
    TextChunk,
)
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.scripted_server import (
    Gate,
    Pause,
    Reply,
    ScriptedServer,
    Step,
    chunk,
    error_reply,
    sse,
    text_reply,
)


@pytest.fixture
async def provider(server: ScriptedServer) -> AsyncIterator[OpenAICompatProvider]:
    client = fast_provider(server.base_url)
    yield client
    await client.aclose()


def fast_provider(base_url: str, **options: object) -> OpenAICompatProvider:
    provider = OpenAICompatProvider(
        base_url,
        options.pop("model", "test-model"),  # type: ignore[arg-type]
        "sk-test-key-0123",
        base_delay=0.001,
        max_delay=0.005,
        **options,  # type: ignore[arg-type]
    )
    # A known window: these tests count connections, and an unknown one would be asked
    # of `/models` first (tests/test_provider_context_window.py covers that).
    provider.context_window = 128_000
    return provider


def request() -> ModelRequest:
    return ModelRequest("sys", [UserMessage("hi")])


async def collect_until_error(
    provider: OpenAICompatProvider, signal: AbortSignal | None = None
) -> tuple[list[StreamEvent], BaseException | None]:
    events: list[StreamEvent] = []
    try:
        async for event in provider.stream(request(), signal or AbortController().signal):
            events.append(event)
    except (ProviderError, AbortError) as exc:
        return events, exc
    return events, None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@asynccontextmanager
async def raw_server(response: bytes) -> AsyncIterator[tuple[str, list[int]]]:
    """A server that answers every request with `response` verbatim, then hangs up.

    For what the scripted server cannot do: break a chunked body midway.
    Yields the base URL and a list that grows by one per connection.
    """
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode().split("\r\n"):
            if line.lower().startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        # Read the whole body: closing with unread input would reset the connection and
        # could discard the response before the client reads it.
        await reader.readexactly(length)
        writer.write(response)
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield f"http://127.0.0.1:{port}/v1", connections


# -- retries ----------------------------------------------------------------------------


async def test_429_with_retry_after_then_success(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(error_reply(429, "Rate limit reached", {"Retry-After": "0"}), text_reply("ok"))
    events, error = await collect_until_error(provider)
    assert error is None
    assert events[0] == RetryScheduled(1, 3, 0.0, "HTTP 429: Rate limit reached")
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "ok"
    assert isinstance(events[-1], ReplyDone) and events[-1].message.text == "ok"
    assert len(server.requests) == 2
    assert server.requests[0] == server.requests[1]  # the same request, sent again


async def test_three_500s_give_up_after_three_attempts(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(*(error_reply(500, f"internal failure {n}") for n in range(3)), text_reply("x"))
    events, error = await collect_until_error(provider)
    assert isinstance(error, ProviderError)
    assert [(e.attempt, e.max_attempts) for e in events if isinstance(e, RetryScheduled)] == [
        (1, 3),
        (2, 3),
    ]
    assert all(isinstance(e, RetryScheduled) for e in events)
    assert all(0 <= e.delay <= 0.005 for e in events if isinstance(e, RetryScheduled))
    assert str(error) == (
        f"gave up after 3 attempts: HTTP 500 from {server.base_url}/chat/completions: "
        "internal failure 2"
    )
    assert error.status == 500
    assert len(server.requests) == 3
    assert server.pending == 1  # the fourth reply was never asked for


async def test_max_attempts_is_configurable(server: ScriptedServer) -> None:
    server.push(error_reply(503, "busy"), text_reply("x"))
    provider = fast_provider(server.base_url, max_attempts=1)
    try:
        events, error = await collect_until_error(provider)
    finally:
        await provider.aclose()
    assert events == []
    assert isinstance(error, ProviderError)
    assert str(error).startswith("gave up after 1 attempt: HTTP 503")
    assert len(server.requests) == 1


async def test_400_is_not_retried_and_carries_the_servers_message(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(error_reply(400, "max_tokens is too large: 999999"), text_reply("x"))
    events, error = await collect_until_error(provider)
    assert events == []
    assert isinstance(error, ProviderError)
    assert str(error) == (
        f"HTTP 400 from {server.base_url}/chat/completions: max_tokens is too large: 999999"
    )
    assert error.status == 400
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        (json.dumps({"error": "model not loaded"}), "application/json", "model not loaded"),
        (
            json.dumps({"object": "error", "message": "vLLM says no"}),
            "application/json",
            "vLLM says no",
        ),
        (json.dumps({"detail": "Not Found"}), "application/json", "Not Found"),
        ("<html>gateway says no</html>", "text/html", "an HTML page: gateway says no"),
        (
            "<html><head><title>502 Bad Gateway</title></head><body><center><h1>"
            "502 Bad Gateway</h1></center><hr><center>nginx/1.25.3</center></body></html>",
            "text/html",
            "an HTML page titled '502 Bad Gateway': nginx/1.25.3",
        ),
        ("", "text/plain", "Not Found"),  # no body: the reason phrase
    ],
)
async def test_error_body_shapes(
    server: ScriptedServer,
    provider: OpenAICompatProvider,
    body: str,
    content_type: str,
    expected: str,
) -> None:
    server.push(Reply([body], status=404, headers={"Content-Type": content_type}))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderError)
    assert str(error) == f"HTTP 404 from {server.base_url}/chat/completions: {expected}"


async def test_long_error_body_is_cut(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(Reply(["y" * 5000], status=422, headers={"Content-Type": "text/plain"}))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderError)
    assert "yyyy" in str(error)
    assert len(str(error)) < 600


async def test_api_key_never_appears_in_errors(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(error_reply(401, "Incorrect API key provided: sk-test-key-0123"))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderError)
    assert str(error) == (
        f"HTTP 401 from {server.base_url}/chat/completions: Incorrect API key provided: ***"
    )


async def test_connection_refused_is_retried_then_fails() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    provider = fast_provider(base_url)
    try:
        events, error = await collect_until_error(provider)
    finally:
        await provider.aclose()
    assert [(e.attempt, e.reason) for e in events if isinstance(e, RetryScheduled)] == [
        (1, "connection refused"),
        (2, "connection refused"),
    ]
    assert len(events) == 2
    assert isinstance(error, ProviderError)
    assert str(error) == (
        f"gave up after 3 attempts: could not connect to {base_url}/chat/completions: "
        "connection refused"
    )


async def test_dropped_connection_before_any_output_is_retried(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(Reply([], drop_connection=True), text_reply("second try"))
    events, error = await collect_until_error(provider)
    assert error is None
    assert isinstance(events[0], RetryScheduled)
    assert "connection" in events[0].reason
    assert isinstance(events[-1], ReplyDone) and events[-1].message.text == "second try"
    assert len(server.requests) == 2


async def test_retryable_error_object_before_any_output_is_retried(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    overloaded = sse({"error": {"message": "Provider overloaded", "code": 502}})
    server.push(Reply([overloaded]), text_reply("fine"))
    events, error = await collect_until_error(provider)
    assert error is None
    assert isinstance(events[0], RetryScheduled)
    assert (events[0].attempt, events[0].reason) == (1, "server error 502: Provider overloaded")
    assert isinstance(events[-1], ReplyDone) and events[-1].message.text == "fine"


async def test_connection_lost_after_text_is_not_retried() -> None:
    piece = chunk({"content": "Half an ans"}).encode()
    response = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    )  # ...and then the connection closes with the chunked body unfinished
    async with raw_server(response) as (base_url, connections):
        provider = fast_provider(base_url)
        try:
            events, error = await collect_until_error(provider)
        finally:
            await provider.aclose()
    assert events == [TextChunk("Half an ans")]
    assert isinstance(error, ProviderError)
    assert "not retried" in str(error)
    assert "connection was lost" in str(error)
    assert len(connections) == 1


async def test_hang_up_after_the_finish_reason_still_completes_the_reply() -> None:
    body = chunk({"content": "Complete."}) + chunk({}, finish="stop")
    piece = body.encode()
    response = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    )  # no `[DONE]` and no closing chunk: the server just hangs up
    async with raw_server(response) as (base_url, _):
        provider = fast_provider(base_url)
        try:
            events, error = await collect_until_error(provider)
        finally:
            await provider.aclose()
    assert error is None
    assert isinstance(events[-1], ReplyDone)
    assert (events[-1].message.text, events[-1].message.finish_reason) == ("Complete.", "stop")


# -- model discovery failures ----------------------------------------------------------


async def test_model_discovery_failure_says_to_pass_model() -> None:
    provider = fast_provider(f"http://127.0.0.1:{free_port()}/v1", model=None)
    try:
        _, error = await collect_until_error(provider)
    finally:
        await provider.aclose()
    assert isinstance(error, ProviderError)
    assert "connection refused" in str(error)
    assert "--model" in str(error)


async def test_model_discovery_http_error_says_to_pass_model() -> None:
    body = b'{"error": {"message": "no such route"}}'
    response = (
        b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
    )
    async with raw_server(response) as (base_url, _):
        provider = fast_provider(base_url, model=None)
        try:
            _, error = await collect_until_error(provider)
        finally:
            await provider.aclose()
    assert isinstance(error, ProviderError)
    assert f"HTTP 404 from {base_url}/models: no such route" in str(error)
    assert "--model" in str(error)
    assert error.status == 404


# -- abort -----------------------------------------------------------------------------


async def test_abort_mid_stream_closes_the_connection(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    gate = Gate()
    server.push(text_reply("one two three", gate=gate))
    controller = AbortController()
    stream = provider.stream(request(), controller.signal)
    first = await anext(stream)
    assert first == TextChunk("one t")
    next_event = asyncio.ensure_future(anext(stream))
    await asyncio.to_thread(gate.reached.wait, 1)
    await asyncio.sleep(0.05)  # let the provider settle into waiting on the socket
    started = time.monotonic()
    controller.abort("user pressed Esc")
    with pytest.raises(AbortError, match="user pressed Esc"):
        await asyncio.wait_for(next_event, 2)  # a bound, so a broken abort fails, not hangs
    assert time.monotonic() - started < 0.5
    assert await asyncio.to_thread(server.disconnected.wait, 1)
    assert server.disconnects == [0]
    gate.open()


async def test_abort_between_chunks_does_not_cancel_the_consumer(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    gate = Gate()
    server.push(text_reply("abc", pieces=3, gate=gate))
    controller = AbortController()
    stream = provider.stream(request(), controller.signal)
    assert await anext(stream) == TextChunk("a")
    # The consumer is busy with its own await when the signal fires: that await must
    # finish normally, and the abort shows up on the next step of the stream.
    controller.abort()
    await asyncio.sleep(0.01)
    with pytest.raises(AbortError):
        await anext(stream)
    assert await asyncio.to_thread(server.disconnected.wait, 1)
    gate.open()


async def test_abort_hangs_up_while_the_consumer_is_busy_elsewhere(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    gate = Gate()
    server.push(text_reply("abc", pieces=3, gate=gate))
    controller = AbortController()
    stream = provider.stream(request(), controller.signal)
    assert await anext(stream) == TextChunk("a")
    controller.abort()
    # Nobody asks the stream for more, yet the request is already gone.
    assert await asyncio.to_thread(server.disconnected.wait, 1)
    with pytest.raises(AbortError):
        await anext(stream)
    gate.open()


class CountingSignal(AbortSignal):
    """Counts the abort callbacks registered, and how many are still registered."""

    def __init__(self) -> None:
        super().__init__()
        self.registered = 0
        self.active = 0

    def add_callback(self, callback: Callable[[str], None]) -> Callable[[], None]:
        self.registered += 1
        self.active += 1
        remove = super().add_callback(callback)
        removed = False

        def counted_remove() -> None:
            nonlocal removed
            if not removed:
                removed = True
                self.active -= 1
            remove()

        return counted_remove


async def test_abort_is_registered_per_request_not_per_read(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    steps: list[Step] = [chunk({"role": "assistant", "content": ""})]
    for n in range(20):
        steps += [chunk({"content": f"{n} "}), Pause(0.005)]  # a read for each piece
    server.push(Reply([*steps, chunk({}, finish="stop"), sse_done()]))
    signal = CountingSignal()
    events, error = await collect_until_error(provider, signal)
    assert error is None
    assert isinstance(events[-1], ReplyDone)
    assert events[-1].message.text == "".join(f"{n} " for n in range(20))
    # Sending the request, then reading the body: one each, however many reads.
    assert signal.registered == 2
    assert signal.active == 0


def sse_done() -> str:
    return "data: [DONE]\n\n"


async def test_abort_during_backoff_wait_is_immediate(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(error_reply(503, "down for maintenance", {"Retry-After": "30"}), text_reply("x"))
    controller = AbortController()
    stream = provider.stream(request(), controller.signal)
    scheduled = await anext(stream)
    assert scheduled == RetryScheduled(1, 3, 30.0, "HTTP 503: down for maintenance")
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    started = time.monotonic()
    controller.abort()
    with pytest.raises(AbortError):
        await asyncio.wait_for(waiting, 2)
    assert time.monotonic() - started < 0.1
    assert len(server.requests) == 1


async def test_already_aborted_signal_sends_nothing(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    controller = AbortController()
    controller.abort()
    events, error = await collect_until_error(provider, controller.signal)
    assert events == []
    assert isinstance(error, AbortError)
    assert server.requests == []


async def test_api_key_is_redacted_from_a_mid_stream_error(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(Reply([sse({"error": {"message": "key sk-test-key-0123 is revoked"}})]))
    _, error = await collect_until_error(provider)
    assert isinstance(error, ProviderError)
    assert str(error) == f"error from {server.base_url}/chat/completions: key *** is revoked"
