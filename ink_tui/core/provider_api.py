"""What a model provider is, as the loop sees it.

A provider turns a `ModelRequest` into a stream of `StreamEvent`s that ends with exactly
one `ReplyDone` carrying the assembled `AssistantMessage`. It must stop at once when the
signal fires (raising `AbortError`), and raise `ProviderError` with the server's own
words when the request fails for good.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol

from ink_tui.core.abort import AbortSignal
from ink_tui.core.messages import AssistantMessage, Message

# Lives apart so configuration (read before the first frame) does not import all of this.
from ink_tui.core.stream_timeouts import StreamTimeouts as StreamTimeouts
from ink_tui.core.tool_api import ToolSpec


@dataclass(slots=True)
class ModelRequest:
    system_prompt: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_output_tokens: int | None = None


@dataclass(slots=True)
class TextChunk:
    text: str


@dataclass(slots=True)
class ThinkingChunk:
    text: str


@dataclass(slots=True)
class RetryScheduled:
    """The request failed in a way worth retrying; the next attempt starts in `delay` s."""

    attempt: int  # the attempt that failed, counting from 1
    max_attempts: int
    delay: float
    reason: str


@dataclass(slots=True)
class Waiting:
    """Nothing has come from the server for `seconds`; the attempt gives up at `limit`.

    Sent a few seconds into a silence and then about every second, so a slow or stuck
    server is never silent on screen; `over` (sent once bytes flow again) ends it.
    """

    seconds: float
    limit: float
    over: bool = False


@dataclass(slots=True)
class ReplyDone:
    message: AssistantMessage


StreamEvent = TextChunk | ThinkingChunk | RetryScheduled | Waiting | ReplyDone


# How servers say a request is longer than the model's context window: OpenAI's code,
# vLLM / llama.cpp / LM Studio / OpenRouter wordings, Anthropic's "prompt is too long".
_OVERFLOW_WORDS = (
    "context_length_exceeded",
    "maximum context length",
    "context length exceeded",
    "context window",
    "prompt is too long",
    "too many tokens",
    "exceeds the context",
    "exceed_context_size",
)


class ProviderError(Exception):
    """A model request that failed for good; `str()` is the message for the user."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable

    @property
    def context_overflow(self) -> bool:
        """The server refused the request as longer than the model's context window (an
        HTTP 400 or 413 whose text says so): compacting the history and retrying helps."""
        if self.status not in (400, 413):
            return False
        text = str(self).lower()
        return any(words in text for words in _OVERFLOW_WORDS)


class Provider(Protocol):
    # Shown in the status bar and print mode: e.g. "openai-compatible" or "demo".
    name: str
    model: str
    # True for the built-in offline demo model; every front end labels it as such.
    is_demo: bool

    def stream(self, request: ModelRequest, signal: AbortSignal) -> AsyncIterator[StreamEvent]:
        """Stream one reply. Raises `AbortError` on abort, `ProviderError` on failure."""
        ...

    async def aclose(self) -> None: ...
