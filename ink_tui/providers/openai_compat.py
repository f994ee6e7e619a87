"""A provider for any server that speaks OpenAI's streamed `/chat/completions`.

That covers OpenAI itself, OpenRouter, DeepSeek, vLLM, llama.cpp, Ollama and LM Studio,
which differ in the details this module smooths over: where reasoning text arrives, how
tool-call fragments are numbered, whether `[DONE]` is sent, and what error bodies look
like.

This module holds the provider itself: model discovery, and the streaming request with
its retries. The request body is built in `openai_request`, the body of the reply is read
in `openai_body` and assembled in `openai_reply`, whether it was a whole reply is judged
in `reply_end`, and the server's error text is extracted in `openai_errors`. Another wire
format (`anthropic`) reuses all of it and replaces the few methods under "what another
wire format replaces". A body that
ends without a finish reason (or `[DONE]` after real chunks), an empty body, an HTML page
or JSON that is not a chunk is a failure that says what came, never an answer. Retries
happen only while nothing has been shown, and never after a `Retry-After` longer than
the policy will wait.

Silence: `StreamWatch` times every wait for the server (for the response, then between
reads), yields `Waiting` a few seconds into one so the front ends can say so, and gives up
at the configured limits (`StreamTimeouts`) instead of the transport's long read timeout.

Abort: waiting for the response runs inside a `signal.scope()` of its own, never a scope
held across a `yield` (that would cancel whatever the *consumer* happens to be awaiting
between two chunks). The body is read by a `BodyReader`, which registers one abort
callback for the whole response: firing the signal closes the connection at once, and
the next step of the stream raises `AbortError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Coroutine
from contextlib import aclosing
from typing import Any, TypeVar, cast

import httpx

from ink_tui.core.abort import AbortSignal
from ink_tui.core.context_window import default_context_window
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    RetryScheduled,
    StreamEvent,
    StreamTimeouts,
    TextChunk,
    ThinkingChunk,
    Waiting,
)
from ink_tui.providers.body import BodyReader
from ink_tui.providers.json_body import JsonBody
from ink_tui.providers.lean_transport import lean_transport
from ink_tui.providers.model_listing import first_model_id, listed_context_window
from ink_tui.providers.openai_body import Reply, read_events, read_page, read_whole
from ink_tui.providers.openai_errors import REASON_LIMIT, server_message, shorten
from ink_tui.providers.openai_reply import ReplyBuilder
from ink_tui.providers.openai_request import build_body
from ink_tui.providers.reply_assembly import ShownChunk
from ink_tui.providers.retry import (
    RetryPolicy,
    TransientFailure,
    abortable_sleep,
    describe_transport_error,
    is_retryable_status,
    retry_after_from,
    transport_failure,
)
from ink_tui.providers.stream_watch import StreamWatch, seconds

T = TypeVar("T")

# Connecting should never take long. For a reply, silences are timed by `StreamWatch`
# (`StreamTimeouts`); the read timeout here bounds other requests (listing models), and
# for a reply it is only a backstop past the watch's own limits.
DEFAULT_TIMEOUT = httpx.Timeout(connect=15.0, read=300.0, write=60.0, pool=15.0)
_BACKSTOP_S = 30.0

_ERROR_BODY_LIMIT = 64 * 1024  # never buffer a huge error page
# Asking `/models` for a context window is a courtesy: never wait long for it.
_LISTING_TIMEOUT = httpx.Timeout(5.0)


class OpenAICompatProvider:
    name: str = "openai-compatible"
    is_demo: bool = False
    # Whether `/models` may say how long a context the model takes (see model_listing).
    lists_context_windows: bool = True

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
        timeouts: StreamTimeouts | None = None,
        gather_s: float = 0.0,
    ) -> None:
        """`gather_s`: the body is taken in batches of at least that long (a front end
        that draws at a frame rate); 0 hands over every network read (`BodyReader`)."""
        self.base_url = base_url.rstrip("/")
        self._gather_s = gather_s
        # Empty until discovered from `/models` when the user named no model.
        self.model: str = model or ""
        self._api_key = api_key or None
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._timeouts = timeouts or StreamTimeouts()
        backstop = max(self._timeouts.first_byte_s, self._timeouts.idle_s) + _BACKSTOP_S
        self._stream_timeout = httpx.Timeout(
            connect=self._timeout.connect,
            read=backstop,
            write=self._timeout.write,
            pool=self._timeout.pool,
        )
        self._policy = RetryPolicy(
            max_attempts=max_attempts, base_delay=base_delay, max_delay=max_delay
        )
        # The model's context window: from the config (set by the assembler), else asked
        # of the server's `/models` once, for a model the defaults do not know.
        self.context_window: int | None = None
        self._window_asked = False
        self._owns_client = client is None
        if client is None:
            client = httpx.AsyncClient(
                timeout=self._timeout, transport=lean_transport(self.base_url)
            )
        self._client = client

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
        listing = _json_or_none(response)
        model = first_model_id(listing)
        if model is None:
            raise ProviderError(f"no model was given and {self._shown(url)} listed none; {hint}")
        self.model = model
        self._window_asked = True
        if self.context_window is None:
            self.context_window = listed_context_window(listing, model)
        return model

    async def learn_context_window(self, signal: AbortSignal | None = None) -> None:
        """Ask `/models` for the window of a model that neither the config nor the table
        of well-known names knows (a local server's model, usually). Once per provider;
        a server that does not say, or does not answer, leaves it unknown."""
        if (
            not self.lists_context_windows
            or self._window_asked
            or self.context_window is not None
            or default_context_window(self.model) is not None
        ):
            return
        self._window_asked = True
        try:
            response = await _guarded(
                signal,
                self._client.get(
                    f"{self.base_url}/models",
                    headers=self._headers("application/json"),
                    timeout=_LISTING_TIMEOUT,
                ),
            )
        except httpx.HTTPError:
            return  # the reply itself will say what is wrong with the server, if anything
        if response.is_success:
            self.context_window = listed_context_window(_json_or_none(response), self.model)

    async def stream(
        self, request: ModelRequest, signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        model = await self.resolve_model(signal)
        await self.learn_context_window(signal)
        url = self._endpoint()
        body = self._body(model, request)
        policy = self._policy
        attempt = 0
        while True:
            attempt += 1
            reply = self._reply(model, self._shown(url))
            shown_text = False
            failure: TransientFailure | None = None
            try:
                async with aclosing(self._attempt(url, body, reply, signal)) as events:
                    async for event in events:
                        if isinstance(event, TextChunk | ThinkingChunk):
                            shown_text = True
                        yield event
            except TransientFailure as exc:
                failure = exc
            if failure is not None:
                if shown_text:
                    # The user has already seen part of this reply; a second attempt
                    # would show a different one after it.
                    raise ProviderError(
                        f"{failure.detail} (part of the reply had already arrived, "
                        "so it was not retried)",
                        status=failure.status,
                    ) from None
                wait = failure.retry_after
                if wait is not None and policy.too_long(wait):
                    # Waiting that long in an interactive tool is worse than saying so;
                    # capping the wait would only ask again too early.
                    raise ProviderError(
                        f"{failure.detail}; the server asked to wait {seconds(wait)} s; "
                        f"not retrying (ink waits at most {seconds(policy.max_retry_after)} s)",
                        status=failure.status,
                        retryable=True,
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

    # -- what another wire format (anthropic.py) replaces ---------------------------------

    def _endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _body(self, model: str, request: ModelRequest) -> dict[str, Any]:
        return build_body(model, request)

    def _reply(self, model: str, shown: str) -> Reply:
        """A fresh assembler of one reply (`ReplyBuilder` here); `finish()` ends it."""
        return ReplyBuilder(model, shown, self._redact)

    def _read_body(
        self, stream: BodyReader, watch: StreamWatch, reply: Reply, shown: str, content_type: str
    ) -> AsyncGenerator[ShownChunk | Waiting, None]:
        if content_type.startswith("application/json"):
            # The server ignored `stream: true` and sent the whole completion at once.
            return read_whole(stream, watch, reply, shown)
        if content_type.startswith("text/html"):
            return read_page(stream, watch, reply, shown)
        return read_events(stream, watch, reply, shown)

    async def _attempt(
        self, url: str, body: dict[str, Any], reply: Reply, signal: AbortSignal
    ) -> AsyncGenerator[ShownChunk | Waiting, None]:
        shown = self._shown(url)
        watch = StreamWatch(self._timeouts, shown)
        content = JsonBody(body)
        request = self._client.build_request(
            "POST",
            url,
            content=content,
            headers={**self._headers("text/event-stream"), **content.headers()},
            timeout=self._stream_timeout,
        )
        response: httpx.Response | None = None
        signal.raise_if_aborted()
        # Sent from a task of its own, so a server that is slow to answer at all can be
        # reported (`Waiting`) and given up on, like one that is slow to stream.
        sending = asyncio.ensure_future(self._client.send(request, stream=True))
        try:
            while not sending.done():
                async with signal.scope():
                    await asyncio.wait((sending,), timeout=watch.patience())
                if not sending.done():
                    yield watch.quiet()
            response = sending.result()
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, shown) from exc
        finally:
            if response is None:
                await _cancel_sending(sending)
        try:
            if not response.is_success:
                await self._raise_for_status(response, shown, signal)
            content_type = response.headers.get("content-type", "").lower()
            async with BodyReader(response, signal, gather_s=self._gather_s) as stream:
                events = self._read_body(stream, watch, reply, shown, content_type)
                async with aclosing(events):
                    async for event in events:
                        yield event
        finally:
            await response.aclose()

    async def _raise_for_status(
        self, response: httpx.Response, shown: str, signal: AbortSignal
    ) -> None:
        status = response.status_code
        try:
            async with asyncio.timeout(self._timeouts.idle_s):
                raw = await _guarded(signal, _read_capped(response))
        except (httpx.HTTPError, TimeoutError):
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


def _json_or_none(response: httpx.Response) -> object:
    try:
        return response.json()
    except ValueError:
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


async def _cancel_sending(sending: asyncio.Future[httpx.Response]) -> None:
    """Stop a request still waiting for its response; close a response that came anyway."""
    if not sending.done():
        sending.cancel()
        await asyncio.wait((sending,))
    if sending.cancelled():
        return
    if sending.exception() is None:  # retrieved either way: never "never retrieved"
        await sending.result().aclose()


async def _guarded(signal: AbortSignal | None, awaitable: Awaitable[T]) -> T:
    """Await under the abort signal: firing it cancels the await (AbortError)."""
    if signal is None:
        return await awaitable
    if signal.aborted and isinstance(awaitable, Coroutine):
        awaitable.close()  # it will never run; closing it avoids a "never awaited" warning
    async with signal.scope():
        return await awaitable
