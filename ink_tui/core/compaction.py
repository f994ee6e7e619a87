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

A summary must shrink what it replaces (`check_shrinks`): one that is as long or longer
is refused and the history is left as it was; a model that writes long summaries would
otherwise grow the context with every compaction, each turn (issue 20, item 9). After a
compaction that left the context above the threshold, refused or not, the next one by
threshold waits until the context has grown by `GROWTH_RATIO` of the window
(`CompactionBackoff`); an overflow or a /compact by hand is always tried.
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
from ink_tui.core.context_window import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD,
    message_tokens,
    messages_tokens,
    text_tokens,
)
from ink_tui.core.events import Notice
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
# How much of the window the context must grow by after a compaction that left it above
# the threshold before the threshold compacts again: a tenth is a few turns of work, so a
# model whose summaries do not help costs one attempt per few turns, not one per turn.
GROWTH_RATIO = 0.1


class CompactionFailed(ProviderError):
    """The summary could not be made; `str()` says why, the history is untouched."""

    def __init__(self, cause: str) -> None:
        super().__init__(f"compaction failed: {cause}")


class CompactionRefused(CompactionFailed):
    """The model's summary is not shorter than what it was to replace."""

    def __init__(self, summary_tokens: int, replaced_tokens: int) -> None:
        self.summary_tokens = summary_tokens
        self.replaced_tokens = replaced_tokens
        super().__init__(
            f"the model's summary (~{summary_tokens:,} tokens) is not shorter than the part "
            f"of the conversation it was to replace (~{replaced_tokens:,} tokens), so it was "
            "not used; the conversation is left as it was"
        )


@dataclass(slots=True)
class CompactionBackoff:
    """When the threshold may compact again, across the runs of one conversation."""

    # The context size the next compaction by threshold waits for; None: no wait.
    retry_at: int | None = None

    def allows(self, tokens: int, threshold: float) -> bool:
        if self.retry_at is None:
            return True
        if tokens < threshold:
            # Back under the threshold (a new conversation, a /compact): a fresh start.
            self.retry_at = None
            return True
        return tokens >= self.retry_at

    def note(self, tokens: int, threshold: float, window: int | None) -> int | None:
        """After a compaction (done or refused) that left `tokens`: when to try again."""
        if window is None or tokens < threshold:
            self.retry_at = None
        else:
            self.retry_at = tokens + max(1, int(window * GROWTH_RATIO))
        return self.retry_at


def check_shrinks(history: Sequence[Message], plan: CutPlan, summary: str) -> None:
    """Raise `CompactionRefused` when `summary` would not be shorter than what it replaces
    (`history[:plan.cut]`, an earlier summary included), counted the same way.

    The header put above the summary is left out: it is the same few dozen tokens every
    time (the one it replaces goes), and a conversation of a few short lines would
    otherwise never compact."""
    replaced = messages_tokens(history[: plan.cut])
    written = text_tokens(summary) + MESSAGE_OVERHEAD
    if written >= replaced:
        raise CompactionRefused(written, replaced)


def refused_notice(refused: CompactionRefused, retry_at: int | None) -> Notice:
    """What the user is told when a compaction by threshold was refused."""
    later = (
        f" It is tried again once the context reaches ~{retry_at:,} tokens."
        if retry_at is not None
        else ""
    )
    return Notice(
        text=(
            f"Compaction refused: the model's summary (~{refused.summary_tokens:,} tokens) "
            f"was not shorter than what it was to replace (~{refused.replaced_tokens:,} "
            f"tokens). The conversation is unchanged.{later}"
        ),
        level="warning",
        kind="compaction_refused",
        data={
            "summary_tokens": refused.summary_tokens,
            "replaced_tokens": refused.replaced_tokens,
            "retry_at": retry_at,
        },
    )


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
