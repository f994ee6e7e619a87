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


@dataclass(frozen=True, slots=True)
class StreamTimeouts:
    """How long one model request may stay quiet, and last, before it is given up.

    `first_byte_s` runs from sending the request to the first byte of the reply's body
    (a local model may load and read the prompt for minutes first); `idle_s` is the
    longest gap between two reads after that; `attempt_s` bounds one attempt whole.
    """

    first_byte_s: float = 120.0
    idle_s: float = 60.0
    attempt_s: float = 600.0
    # A silence this long is reported (`Waiting`), then again every `notice_every_s`.
    notice_after_s: float = 3.0
    notice_every_s: float = 1.0


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
