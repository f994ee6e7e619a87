"""A provider for any server that speaks OpenAI's streamed `/chat/completions`.

That covers OpenAI itself, OpenRouter, DeepSeek, vLLM, llama.cpp, Ollama and LM Studio,
which differ in the details this module smooths over: where reasoning text arrives, how
tool-call fragments are numbered, whether `[DONE]` is sent, and what error bodies look
like.

This module holds the provider itself: model discovery, and the streaming request with
its retries. The request body is built in `openai_request`, the reply is assembled in
`openai_reply`, and the server's error text is extracted in `openai_errors`.

Abort: connecting runs inside a `signal.scope()` of its own, never a scope held across a
`yield` (that would cancel whatever the *consumer* happens to be awaiting between two
chunks). The body is read by a `BodyReader`, which registers one abort callback for the
whole response: firing the signal closes the connection at once, and the next step of
the stream raises `AbortError`.

Speed: a fast server sends a few characters per SSE event, so everything after the read
is done per batch where it can be (one decode, one split, one chunk to show per run of
text), and only the JSON of each event is parsed one by one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Coroutine
from contextlib import aclosing
from typing import Any, TypeVar, cast

import httpx

from ink_tui.core.abort import AbortSignal
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    RetryScheduled,
    StreamEvent,
)
from ink_tui.providers.body import BodyReader
from ink_tui.providers.openai_errors import REASON_LIMIT, server_message, shorten
from ink_tui.providers.openai_reply import ReplyBuilder, ShownChunk
from ink_tui.providers.openai_request import build_body
from ink_tui.providers.retry import (
    RetryPolicy,
    TransientFailure,
    abortable_sleep,
    describe_transport_error,
    is_retryable_status,
    retry_after_from,
    transport_failure,
)
from ink_tui.providers.sse import SSEParser

T = TypeVar("T")

# Reasoning models may think for minutes before the first token, so the read timeout
# (the gap between two chunks) is generous; connecting should never take long.
DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=15.0)

_ERROR_BODY_LIMIT = 64 * 1024  # never buffer a huge error page
# After `[DONE]` we read on to the end of the body so the connection can be reused, but
# not for long: a server that keeps the stream open must not stall the reply.
_DRAIN_SECONDS = 1.0


class OpenAICompatProvider:
    name: str = "openai-compatible"
    is_demo: bool = False

    def __init__(
        self,
        base_url: str,
        model: str | None,
        api_key: str | None,
        *,
        max_attempts: int = 3,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        client: httpx.AsyncClient | None = None,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # Empty until discovered from `/models` when the user named no model.
        self.model: str = model or ""
        self._api_key = api_key or None
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._policy = RetryPolicy(
            max_attempts=max_attempts, base_delay=base_delay, max_delay=max_delay
        )
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=self._timeout)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def resolve_model(self, signal: AbortSignal | None = None) -> str:
        """The model to ask for: the given one, else the first that `/models` lists."""
        if self.model:
            return self.model
        url = f"{self.base_url}/models"
        hint = "pass --model NAME to choose one"
        try:
            response = await _guarded(
                signal,
                self._client.get(
                    url, headers=self._headers("application/json"), timeout=self._timeout
                ),
            )
        except httpx.HTTPError as exc:
            cause = describe_transport_error(exc)
            raise ProviderError(
                f"no model was given and listing models failed: GET {self._shown(url)}: "
                f"{cause}; {hint}"
            ) from exc
        if not response.is_success:
            message = self._redact(server_message(response.text) or response.reason_phrase)
            raise ProviderError(
                f"no model was given and listing models failed: HTTP {response.status_code} "
                f"from {self._shown(url)}: {message}; {hint}",
                status=response.status_code,
            )
        model = _first_model_id(response)
        if model is None:
            raise ProviderError(f"no model was given and {self._shown(url)} listed none; {hint}")
        self.model = model
        return model

    async def stream(
        self, request: ModelRequest, signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        model = await self.resolve_model(signal)
        url = f"{self.base_url}/chat/completions"
        body = build_body(model, request)
        policy = self._policy
        attempt = 0
        while True:
            attempt += 1
            reply = ReplyBuilder(model, self._shown(url), self._redact)
            yielded = False
            failure: TransientFailure | None = None
            try:
                async with aclosing(self._attempt(url, body, reply, signal)) as events:
                    async for event in events:
                        yielded = True
                        yield event
            except TransientFailure as exc:
                failure = exc
            if failure is not None:
                if yielded:
                    # The user has already seen part of this reply; a second attempt
                    # would show a different one after it.
                    raise ProviderError(
                        f"{failure.detail} (part of the reply had already arrived, "
                        "so it was not retried)",
                        status=failure.status,
                    ) from None
                if attempt >= policy.max_attempts:
                    raise ProviderError(
                        f"gave up after {attempt} attempt{'s' if attempt > 1 else ''}: "
                        f"{failure.detail}",
                        status=failure.status,
                        retryable=True,
                    ) from None
                delay = policy.delay(attempt, failure.retry_after)
                yield RetryScheduled(attempt, policy.max_attempts, delay, failure.reason)
                await abortable_sleep(delay, signal)
                continue
            yield ReplyDone(reply.finish())
            return

    async def _attempt(
        self, url: str, body: dict[str, Any], reply: ReplyBuilder, signal: AbortSignal
    ) -> AsyncGenerator[ShownChunk, None]:
        shown = self._shown(url)
        request = self._client.build_request(
            "POST",
            url,
            json=body,
            headers=self._headers("text/event-stream"),
            timeout=self._timeout,
        )
        try:
            response = await _guarded(signal, self._client.send(request, stream=True))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, shown) from exc
        try:
            if not response.is_success:
                await self._raise_for_status(response, shown, signal)
            if response.headers.get("content-type", "").startswith("application/json"):
                # The server ignored `stream: true` and sent the whole completion at once.
                whole = await self._read(response.aread(), shown, signal)
                reply.feed(whole.decode("utf-8", "replace"))
                for event in reply.take():
                    yield event
                return
            parser = SSEParser()
            async with BodyReader(response, signal) as stream:
                while True:
                    try:
                        # No scope here: the reader answers the signal itself.
                        data = await self._read(stream.read(), shown, None)
                    except TransientFailure:
                        if not reply.finished:
                            raise
                        # The finish reason has arrived, so the reply is whole; a server
                        # that hangs up instead of ending the body cleanly lost us nothing.
                        data = None
                    sse_events = parser.feed(data) if data is not None else parser.close()
                    done = False
                    failure: Exception | None = None
                    try:
                        for sse_event in sse_events:
                            if _is_done(sse_event.data):
                                done = True
                                break
                            reply.feed(sse_event.data, sse_event.event)
                    except (ProviderError, TransientFailure) as exc:
                        # What came before the error in this read is shown first, as it
                        # would have been had it arrived in a read of its own.
                        failure = exc
                    for event in reply.take():
                        yield event
                    if failure is not None:
                        raise failure
                    if done:
                        await self._drain(stream)
                        return
                    if data is None:
                        return  # no `[DONE]`: the end of the body ends the reply
        finally:
            await response.aclose()

    async def _read(self, awaitable: Awaitable[T], shown: str, signal: AbortSignal | None) -> T:
        try:
            return await _guarded(signal, awaitable)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, shown) from exc

    async def _drain(self, stream: BodyReader) -> None:
        try:
            async with asyncio.timeout(_DRAIN_SECONDS):
                while await stream.read() is not None:
                    pass
        except (TimeoutError, httpx.HTTPError):
            pass  # the reply is complete; closing the response discards the rest

    async def _raise_for_status(
        self, response: httpx.Response, shown: str, signal: AbortSignal
    ) -> None:
        status = response.status_code
        try:
            raw = await _guarded(signal, _read_capped(response))
        except httpx.HTTPError:
            raw = b""  # the status alone is still worth reporting
        message = server_message(raw.decode("utf-8", "replace")) or response.reason_phrase
        if response.is_redirect:
            location = response.headers.get("location", "elsewhere")
            message = f"redirected to {location}; check the base URL"
        message = self._redact(message)
        detail = f"HTTP {status} from {shown}: {message}"
        if is_retryable_status(status):
            raise TransientFailure(
                f"HTTP {status}: {shorten(message, REASON_LIMIT)}",
                detail,
                status=status,
                retry_after=retry_after_from(response.headers),
            )
        raise ProviderError(detail, status=status)

    def _transport_error(self, exc: httpx.HTTPError, shown: str) -> Exception:
        failure = transport_failure(exc, shown)
        if failure is not None:
            return failure
        return ProviderError(f"request to {shown} failed: {describe_transport_error(exc)}")

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _shown(self, url: str) -> str:
        """`url` as it may appear in a message: without any credentials in it."""
        try:
            return str(httpx.URL(url).copy_with(username=None, password=None))
        except httpx.InvalidURL:
            return url

    def _redact(self, text: str) -> str:
        # Some servers echo the key they rejected; it must not reach the screen or logs.
        if self._api_key and len(self._api_key) >= 4:
            return text.replace(self._api_key, "***")
        return text


def _first_model_id(response: httpx.Response) -> str | None:
    try:
        listing = response.json()
    except ValueError:
        return None
    entries = listing.get("data") if isinstance(listing, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        model_id = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(model_id, str) and model_id:
            return model_id
    return None


async def _read_capped(response: httpx.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    async with aclosing(_generator(response.aiter_bytes())) as chunks:
        async for part in chunks:
            parts.append(part)
            size += len(part)
            if size >= _ERROR_BODY_LIMIT:
                break
    return b"".join(parts)[:_ERROR_BODY_LIMIT]


def _generator(chunks: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    # httpx types its byte iterators loosely; they are async generators, which is what
    # `aclosing` needs to close them the moment we stop reading.
    return cast(AsyncGenerator[bytes, None], chunks)


def _is_done(data: str) -> bool:
    # Checked for every event, so the length test spares the copy `strip()` makes.
    return len(data) < 32 and data.strip() == "[DONE]"


async def _guarded(signal: AbortSignal | None, awaitable: Awaitable[T]) -> T:
    """Await under the abort signal: firing it cancels the await (AbortError)."""
    if signal is None:
        return await awaitable
    if signal.aborted and isinstance(awaitable, Coroutine):
        awaitable.close()  # it will never run; closing it avoids a "never awaited" warning
    async with signal.scope():
        return await awaitable
