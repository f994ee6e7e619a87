"""How big a model's context window is, and how full a request would make it.

The window comes, in this order, from the user's config (`[context_windows]`), from the
server (`/v1/models` fields such as `context_length`), or from `KNOWN_WINDOWS` below,
matched on the model's name. Unknown: None, and nothing is compacted automatically
(a "context length exceeded" error still compacts and retries once).

Tokens are counted as the provider reports them wherever possible (the usage of the last
reply: its input plus its output is what the next request starts from). What was added
since, and everything when no usage is known, is estimated at four characters a token:
rough, but it errs on the side of compacting a little early.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ink_tui.core.messages import AssistantMessage, Message, SummaryMessage, ToolResultMessage
from ink_tui.core.tool_api import ToolSpec

# Prefixes of well-known model names (lower case, after any "vendor/" part) and their
# windows in tokens. The first match wins, so a longer prefix comes before a shorter one.
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude-", 200_000),
    ("qwen3", 40_960),
    ("qwen2.5", 32_768),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama-3.3", 131_072),
    ("llama3", 8_192),
    ("mistral", 32_768),
    ("gemma3", 131_072),
    ("deepseek", 131_072),
)

CHARS_PER_TOKEN = 4
# Each message costs a few tokens of framing (role, separators) besides its text.
MESSAGE_OVERHEAD = 4


def default_context_window(model: str) -> int | None:
    """The window of a well-known model, by name; None when the name is not known."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    for prefix, window in KNOWN_WINDOWS:
        if name.startswith(prefix):
            return window
    return None


def window_of(provider: object) -> int | None:
    """The provider's window (config or server), else the default for its model's name."""
    window = getattr(provider, "context_window", None)
    if isinstance(window, int) and window > 0:
        return window
    return default_context_window(str(getattr(provider, "model", "") or ""))


def text_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def message_tokens(message: Message) -> int:
    if isinstance(message, AssistantMessage):
        calls = sum(
            len(c.name) + len(c.raw_arguments or json.dumps(c.arguments))
            for c in message.tool_calls
        )
        return text_tokens(message.text) + -(-calls // CHARS_PER_TOKEN) + MESSAGE_OVERHEAD
    if isinstance(message, ToolResultMessage):
        return text_tokens(message.content) + MESSAGE_OVERHEAD
    return text_tokens(message.model_text()) + MESSAGE_OVERHEAD


def messages_tokens(messages: Sequence[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


def fixed_tokens(system_prompt: str, tools: Sequence[ToolSpec]) -> int:
    """What every request carries besides the messages: the system prompt and tools."""
    spec_chars = sum(
        len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in tools
    )
    return text_tokens(system_prompt) + -(-spec_chars // CHARS_PER_TOKEN)


def context_tokens(history: Sequence[Message], fixed: int) -> int:
    """How many tokens the next request with `history` would hold.

    From the last reply that has usage: its input and output tokens (the provider's own
    count of everything up to and including it) plus an estimate of what came after.
    Without such a reply: an estimate of everything, `fixed` included. Replies a
    compaction kept counted the context before it and are passed over.
    """
    stale = history[0].kept + 1 if history and isinstance(history[0], SummaryMessage) else 0
    for index in range(len(history) - 1, stale - 1, -1):
        message = history[index]
        if isinstance(message, AssistantMessage):
            usage = message.usage
            reported = usage.input_tokens + usage.output_tokens
            if reported > 0:
                return reported + messages_tokens(history[index + 1 :])
    return fixed + messages_tokens(history)
