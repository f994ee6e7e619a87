"""Compaction: the older part of the history becomes a summary the model writes.

`plan_cut` picks where the kept part starts; `summarise` asks the model for the summary.
The loop (core/loop.py, `AgentLoop.compact`) puts them together, emits the events and
swaps the history only once the summary is in: an abort or a failure leaves the history
exactly as it was.

Where to cut. The kept part must start at a user or assistant message, never at a tool
result, so a call is never parted from its result. It keeps as many recent user turns
as fit in `keep_tokens` (a turn: a user message and everything after it up to the next);
when not even the last turn fits (one long run of tool calls), it keeps the most recent
messages that fit, starting at an assistant message; at the very least the last message
that is not a tool result. An earlier summary (the history's first message) is always
summarised again, folded into the new one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ink_tui.core.abort import AbortError, AbortSignal
from ink_tui.core.compaction_prompt import (
    SUMMARY_SYSTEM_PROMPT,
    summary_request_text,
    summary_text,
)
from ink_tui.core.context_window import CHARS_PER_TOKEN, message_tokens
from ink_tui.core.messages import (
    Message,
    SummaryMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ink_tui.core.provider_api import (
    ModelRequest,
    Provider,
    ProviderError,
    ReplyDone,
    StreamEvent,
    TextChunk,
)

# The kept part's share of the window; the summary and the rest must fit well below the
# threshold so that the next requests do not compact again at once.
KEEP_RATIO = 0.25
# What is kept when the window is not known (a manual /compact, an overflow).
KEEP_TOKENS_UNKNOWN = 8_000
# How much of the window the summarisation request's transcript may fill.
REQUEST_RATIO = 0.6
# The summary's own length limit, in output tokens.
SUMMARY_MAX_TOKENS = 4_096


class CompactionFailed(ProviderError):
    """The summary could not be made; `str()` says why, the history is untouched."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"compaction failed: {cause}")


@dataclass(frozen=True, slots=True)
class CutPlan:
    # history[start:cut] is summarised (after an earlier summary at 0, if any); the rest
    # is kept as it is.
    start: int
    cut: int
    previous: SummaryMessage | None


def keep_budget(window: int | None) -> int:
    return int(window * KEEP_RATIO) if window else KEEP_TOKENS_UNKNOWN


def plan_cut(history: Sequence[Message], keep_tokens: int) -> CutPlan | None:
    """Where to cut (see the module docstring); None when there is nothing to summarise."""
    previous = history[0] if history and isinstance(history[0], SummaryMessage) else None
    start = 1 if previous is not None else 0
    # Tokens of history[i:] for every i.
    suffix = [0] * (len(history) + 1)
    for index in range(len(history) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + message_tokens(history[index])
    candidates = [
        i for i in range(start + 1, len(history)) if not isinstance(history[i], ToolResultMessage)
    ]
    if not candidates:
        return None
    turns = [i for i in candidates if isinstance(history[i], UserMessage)]
    fitting_turns = [i for i in turns if suffix[i] <= keep_tokens]
    if fitting_turns:
        cut = fitting_turns[0]
    else:
        fitting = [i for i in candidates if suffix[i] <= keep_tokens]
        cut = fitting[0] if fitting else candidates[-1]
    return CutPlan(start, cut, previous)


async def summarise(
    provider: Provider,
    signal: AbortSignal,
    history: Sequence[Message],
    plan: CutPlan,
    *,
    instructions: str = "",
    window: int | None = None,
    on_event: Callable[[StreamEvent], None] = lambda _: None,
) -> tuple[str, Usage]:
    """Ask the model for the summary of `history[plan.start:plan.cut]`.

    Raises `AbortError` on abort and `CompactionFailed` (with the cause) otherwise.
    Streamed text is not shown: it is collected; retries and waits go to `on_event`.
    """
    previous = summary_text(plan.previous) if plan.previous is not None else None
    budget = int(window * REQUEST_RATIO * CHARS_PER_TOKEN) if window else None
    text = summary_request_text(history[plan.start : plan.cut], previous, instructions, budget)
    request = ModelRequest(
        system_prompt=SUMMARY_SYSTEM_PROMPT,
        messages=[UserMessage(text)],
        tools=[],
        max_output_tokens=SUMMARY_MAX_TOKENS,
    )
    parts: list[str] = []
    usage = Usage()
    try:
        async for event in provider.stream(request, signal):
            if isinstance(event, TextChunk):
                parts.append(event.text)
            elif isinstance(event, ReplyDone):
                usage = event.message.usage
                if event.message.text:
                    parts = [event.message.text]
                break
            else:
                on_event(event)
    except AbortError:
        raise
    except Exception as error:
        cause = str(error) or type(error).__name__
        raise CompactionFailed(f"the summary request failed: {cause}") from error
    summary = "".join(parts).strip()
    if not summary:
        raise CompactionFailed("the model answered the summary request with no text")
    return summary, usage
