"""Conversation messages: what the model sees, in order.

Only what belongs in the model's context lives here. Display-only facts (durations,
diffs, where full output was saved) travel on events, never in these messages.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

# How queued input joins a run: at the next step ("steer") or when the run would end
# ("follow_up"). The queue, the controller, the API, RPC and the public events all use this.
QueueMode = Literal["steer", "follow_up"]
QUEUE_MODES: tuple[QueueMode, ...] = get_args(QueueMode)
# How a user message entered the history: the prompt that started the run, or queued input.
UserKind = Literal["prompt", QueueMode]


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cached_tokens += other.cached_tokens


@dataclass(slots=True)
class UserMessage:
    content: str
    # How it entered the history: the prompt that started the run, or an injection.
    kind: UserKind = "prompt"
    role: Literal["user"] = "user"
    # Who wrote it: None for the user; otherwise the name of the program part (an
    # extension) that injected it, with what it says it is (a fact, a constraint, a
    # task). The model is told so (`model_text`): never passed off as the user's words.
    source: str | None = None
    custom_type: str | None = None
    # Its entry in the session's tree (rewind and fork name it); set when it enters the
    # history. Never sent to the model, and no part of what the message says (equality).
    entry_id: str | None = field(default=None, compare=False)

    def model_text(self) -> str:
        """The content as the model reads it: an injected message names its sender."""
        if self.source is None:
            return self.content
        return f"{injected_marker(self.source, self.custom_type)} {self.content}"


# Twelve hex digits: a session of 20,000 entries has about a one in 30 million chance
# of any two ids alike (eight digits would make that about one in twenty).
ENTRY_ID_HEX_CHARS = 12


def new_entry_id() -> str:
    """An id for one entry of a session's tree (see session/session_tree.py)."""
    return secrets.token_hex(ENTRY_ID_HEX_CHARS // 2)


def injected_marker(source: str, custom_type: str | None) -> str:
    kind = f", {custom_type}" if custom_type else ""
    return f"[from extension {source!r}{kind}; not written by the user]"


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    # Parsed arguments. `arguments_error` is set instead when the model sent JSON that
    # does not parse; `raw_arguments` keeps the text exactly as the model sent it so the
    # history replays faithfully.
    arguments: dict[str, Any]
    raw_arguments: str = ""
    arguments_error: str | None = None


@dataclass(slots=True)
class ThinkingBlock:
    """One block of reasoning as the provider signed it, kept to be sent back as it came.

    Anthropic checks the signature of the thinking it is sent back (it must be, after a
    tool call while extended thinking is on). A `redacted` block holds the provider's
    encrypted data in `text`, which is never shown.
    """

    text: str
    signature: str = ""
    redacted: bool = False


# "aborted": the reply was cut short by an interrupt; only its text so far is kept.
StopReason = Literal["stop", "tool_calls", "length", "content_filter", "aborted", "unknown"]


@dataclass(slots=True)
class AssistantMessage:
    text: str = ""
    thinking: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    # Why the model stopped this reply (normalised from the provider's finish reason).
    finish_reason: StopReason = "stop"
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    role: Literal["assistant"] = "assistant"
    # The provider's own blocks behind `thinking`, for replaying them (Anthropic); empty
    # for providers whose reasoning is not sent back.
    thinking_blocks: list[ThinkingBlock] = field(default_factory=list)


@dataclass(slots=True)
class ToolResultMessage:
    call_id: str
    tool_name: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"


@dataclass(slots=True)
class SummaryMessage(UserMessage):
    """The summary that stands for the older part of a compacted conversation.

    It reaches the model as a user message (so every provider sends it as one) and is
    always the first message of the history. `covers` is how many messages of the whole
    conversation it stands for: the history is this summary plus the messages from
    `covers` on. It is never recorded as a user entry: the session file keeps it in a
    compaction entry (session/entries.py).
    """

    covers: int = 0
    # How many messages followed it when it was made: their usage counted the context
    # before the compaction, so it says nothing about the context now.
    kept: int = 0


Message = UserMessage | AssistantMessage | ToolResultMessage
