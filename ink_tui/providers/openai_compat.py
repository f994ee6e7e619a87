"""A provider for any server that speaks OpenAI's streamed `/chat/completions`.

That covers OpenAI itself, OpenRouter, DeepSeek, vLLM, llama.cpp, Ollama and LM Studio,
which differ in the details this module smooths over: where reasoning text arrives, how
tool-call fragments are numbered, whether `[DONE]` is sent, and what error bodies look
like.

Abort: each network await runs inside its own `signal.scope()`, never a scope held across
a `yield`. A scope spanning the yields would cancel whatever the *consumer* happens to be
awaiting between two chunks; scoping each await still closes the connection the moment
the signal fires while we wait on the server, and a fire between chunks is caught on
entry to the next scope.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import httpx

from ink_tui.core.abort import AbortSignal
from ink_tui.core.messages import (
    AssistantMessage,
    StopReason,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    RetryScheduled,
    StreamEvent,
    TextChunk,
    ThinkingChunk,
)
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

_MESSAGE_LIMIT = 500  # characters of a server's error text worth showing
_REASON_LIMIT = 120  # the one-line retry notice is shorter still
_ERROR_BODY_LIMIT = 64 * 1024  # never buffer a huge error page
# After `[DONE]` we read on to the end of the body so the connection can be reused, but
# not for long: a server that keeps the stream open must not stall the reply.
_DRAIN_SECONDS = 1.0

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    # The legacy single-function API, and spellings some compatible servers use.
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "eos": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
}


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
    ) -> AsyncGenerator[TextChunk | ThinkingChunk, None]:
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
                for event in reply.feed(whole.decode("utf-8", "replace")):
                    yield event
                return
            parser = SSEParser()
            async with aclosing(_generator(response.aiter_bytes())) as chunks:
                while True:
                    try:
                        data = await self._read(anext(chunks, None), shown, signal)
                    except TransientFailure:
                        if not reply.finished:
                            raise
                        # The finish reason has arrived, so the reply is whole; a server
                        # that hangs up instead of ending the body cleanly lost us nothing.
                        data = None
                    sse_events = parser.feed(data) if data is not None else parser.close()
                    for sse_event in sse_events:
                        if sse_event.data.strip() == "[DONE]":
                            await self._drain(chunks, signal)
                            return
                        for event in reply.feed(sse_event.data, sse_event.event):
                            yield event
                    if data is None:
                        return  # no `[DONE]`: the end of the body ends the reply
        finally:
            await response.aclose()

    async def _read(self, awaitable: Awaitable[T], shown: str, signal: AbortSignal) -> T:
        try:
            return await _guarded(signal, awaitable)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, shown) from exc

    async def _drain(self, chunks: AsyncIterator[bytes], signal: AbortSignal) -> None:
        try:
            async with asyncio.timeout(_DRAIN_SECONDS), signal.scope():
                async for _ in chunks:
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
                f"HTTP {status}: {_cut(message, _REASON_LIMIT)}",
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


# -- the request ----------------------------------------------------------------------


def build_body(model: str, request: ModelRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": encode_messages(request),
        "stream": True,
        # Without this most servers send no token counts at all when streaming.
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.parameters,
                },
            }
            for spec in request.tools
        ]
    if request.max_output_tokens is not None:
        body["max_tokens"] = request.max_output_tokens
    return body


def encode_messages(request: ModelRequest) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    if request.system_prompt:
        wire.append({"role": "system", "content": request.system_prompt})
    for message in request.messages:
        if isinstance(message, UserMessage):
            wire.append({"role": "user", "content": message.content})
        elif isinstance(message, ToolResultMessage):
            wire.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
            )
        else:
            # Thinking is not sent back: several servers reject `reasoning_content` in
            # the history, and the model does not need its own past reasoning.
            entry: dict[str, Any] = {
                "role": "assistant",
                "content": None if not message.text and message.tool_calls else message.text,
            }
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": call.raw_arguments or json.dumps(call.arguments),
                        },
                    }
                    for call in message.tool_calls
                ]
            wire.append(entry)
    return wire


# -- the reply ------------------------------------------------------------------------


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyBuilder:
    """Assembles one reply from parsed stream chunks (or one non-streamed completion)."""

    def __init__(
        self,
        model: str,
        source: str = "the server",
        redact: Callable[[str], str] = str,
    ) -> None:
        self._model = model
        self._source = source
        # Applied to the server's own error text, which may quote the API key.
        self._redact = redact
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._calls: list[_PartialCall] = []
        # The server's tool-call `index` -> position in `_calls`.
        self._slots: dict[int, int] = {}
        self._finish: str | None = None
        self._usage = Usage()

    def feed(self, data: str, event: str = "message") -> list[TextChunk | ThinkingChunk]:
        """Take the data of one SSE event; returns the text to show from it."""
        if not data.strip():
            return []
        try:
            obj = json.loads(data)
        except ValueError:
            if event == "error":
                message = self._redact(_cut(data))
                raise ProviderError(f"error from {self._source}: {message}") from None
            raise ProviderError(
                f"{self._source} sent a chunk that is not valid JSON: {_cut(data, 200)!r}"
            ) from None
        if not isinstance(obj, dict):
            raise ProviderError(f"{self._source} sent an unexpected chunk: {_cut(data, 200)!r}")
        if obj.get("error"):
            raise self._stream_error(obj["error"])
        if isinstance(obj.get("usage"), dict):
            self._usage = parse_usage(obj["usage"])  # the latest report is the total
        if isinstance(obj.get("model"), str) and obj["model"]:
            self._model = obj["model"]
        out: list[TextChunk | ThinkingChunk] = []
        for choice in obj.get("choices") or []:
            # Only one completion is requested; ignore any others a server sends.
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])
            # `message` instead of `delta` when the server did not stream.
            delta = choice.get("delta") or choice.get("message")
            if isinstance(delta, dict):
                out.extend(self._delta(delta))
        return out

    @property
    def finished(self) -> bool:
        """True once the server has said why the reply ended."""
        return self._finish is not None

    def finish(self) -> AssistantMessage:
        calls = [_finish_call(partial) for partial in self._calls]
        return AssistantMessage(
            text="".join(self._text),
            thinking="".join(self._thinking),
            tool_calls=calls,
            finish_reason=normalise_finish_reason(self._finish, has_tool_calls=bool(calls)),
            usage=self._usage,
            model=self._model,
        )

    def _delta(self, delta: dict[str, Any]) -> list[TextChunk | ThinkingChunk]:
        out: list[TextChunk | ThinkingChunk] = []
        # DeepSeek, vLLM and llama.cpp say `reasoning_content`; OpenRouter and Ollama say
        # `reasoning`. Some send both with the same text, so take one.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._thinking.append(reasoning)
            out.append(ThinkingChunk(reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._text.append(content)
            out.append(TextChunk(content))
        for fragment in delta.get("tool_calls") or []:
            if isinstance(fragment, dict):
                self._tool_fragment(fragment)
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            self._tool_fragment({"index": 0, "function": legacy})
        return out

    def _tool_fragment(self, fragment: dict[str, Any]) -> None:
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        raw_id = fragment.get("id")
        call_id = raw_id if isinstance(raw_id, str) else ""
        partial = self._partial_for(fragment.get("index"), call_id)
        if call_id and not partial.id:
            partial.id = call_id
        name = function.get("name")
        # Some servers repeat the name in every fragment; the first one is the name.
        if isinstance(name, str) and name and not partial.name:
            partial.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            partial.arguments.append(arguments)
        elif isinstance(arguments, dict):
            partial.arguments.append(json.dumps(arguments))  # sent parsed, not as text

    def _partial_for(self, index: object, call_id: str) -> _PartialCall:
        if not isinstance(index, int) or isinstance(index, bool):
            # No index (non-streamed replies, a few servers): a known id continues its
            # call, a new id starts one, no id continues the latest.
            for partial in self._calls:
                if call_id and partial.id == call_id:
                    return partial
            if call_id or not self._calls:
                return self._new_call()
            return self._calls[-1]
        slot = self._slots.get(index)
        if slot is None or (call_id and self._calls[slot].id not in ("", call_id)):
            # A fresh index, or a server that numbers every call 0 but gives each its
            # own id: either way a new call starts here.
            self._new_call()
            slot = self._slots[index] = len(self._calls) - 1
        return self._calls[slot]

    def _new_call(self) -> _PartialCall:
        self._calls.append(_PartialCall())
        return self._calls[-1]

    def _stream_error(self, error: object) -> Exception:
        message = self._redact(_error_text(error) or "unknown error")
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and not isinstance(code, bool) else None
        detail = f"error from {self._source}: {message}"
        if status is not None and is_retryable_status(status):
            reason = f"server error {status}: {_cut(message, _REASON_LIMIT)}"
            return TransientFailure(reason, detail, status=status)
        return ProviderError(detail, status=status)


def _finish_call(partial: _PartialCall) -> ToolCall:
    raw = "".join(partial.arguments)
    arguments, error = parse_arguments(raw)
    return ToolCall(
        id=partial.id or f"call_{uuid.uuid4().hex[:24]}",
        name=partial.name,
        arguments=arguments,
        raw_arguments=raw,
        arguments_error=error,
    )


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, or `({}, why)` when the model sent bad JSON."""
    if not raw.strip():
        return {}, None  # a call to a tool that takes no arguments
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return {}, f"invalid JSON in arguments: {exc}"
    if not isinstance(value, dict):
        return {}, f"invalid JSON in arguments: expected an object, got {type(value).__name__}"
    return value, None


def normalise_finish_reason(raw: str | None, *, has_tool_calls: bool) -> StopReason:
    reason = _FINISH_REASONS.get(raw, "unknown") if raw else None
    # Several servers say "stop" (or nothing) even when the reply is a tool call.
    if has_tool_calls and reason in ("stop", None):
        return "tool_calls"
    return reason or "unknown"


def parse_usage(raw: dict[str, Any]) -> Usage:
    completion = raw.get("completion_tokens_details")
    prompt = raw.get("prompt_tokens_details")
    cached = _count(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0
    return Usage(
        input_tokens=_count(raw.get("prompt_tokens")),
        output_tokens=_count(raw.get("completion_tokens")),
        reasoning_tokens=(
            _count(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0
        ),
        # DeepSeek reports cache hits under its own name.
        cached_tokens=cached or _count(raw.get("prompt_cache_hit_tokens")),
    )


def server_message(body: str) -> str:
    """The server's own words from an error body, whatever shape it came in."""
    body = body.strip()
    if not body:
        return ""
    try:
        obj = json.loads(body)
    except ValueError:
        return _cut(body)
    return _cut(_error_text(obj) or body)


def _error_text(obj: object) -> str:
    if isinstance(obj, str):
        return obj.strip()
    if not isinstance(obj, dict):
        return ""
    for key in ("error", "message", "detail"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict):
            text = _error_text(value)
            if text:
                return text
    return ""


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


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _cut(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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


async def _guarded(signal: AbortSignal | None, awaitable: Awaitable[T]) -> T:
    """Await under the abort signal: firing it cancels the await (AbortError)."""
    if signal is None:
        return await awaitable
    if signal.aborted and isinstance(awaitable, Coroutine):
        awaitable.close()  # it will never run; closing it avoids a "never awaited" warning
    async with signal.scope():
        return await awaitable
