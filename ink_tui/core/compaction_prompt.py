"""What the model is asked when the conversation is compacted, and how the answer is used.

The part to summarise goes to the model as one transcript in one user message, not as the
original messages: a request without tools may not replay tool calls on every server, and
a transcript can be cut to fit (long tool output is trimmed, the middle dropped first).
The summary comes back as the first message of the history (`summary_message`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    SummaryMessage,
    ToolResultMessage,
)

SUMMARY_SYSTEM_PROMPT = """\
You are compacting the conversation of a coding agent so that it can go on working with \
less context. You will get the earlier part of the conversation as a transcript. Write a \
summary that lets the agent continue the work as if it had read the whole transcript. \
Do not continue the conversation and do not call tools: only write the summary.

Use these sections, in this order, as markdown headings:

## Goal
What the user wants overall, in their terms, with every constraint and preference they \
stated (tools, style, things not to do). Quote short instructions exactly.

## Decisions
What was decided or learned and why: approaches chosen and rejected, facts about the \
code base, commands that work (how to build, test, run), errors met and their causes.

## Files
Every file read, created, edited or deleted, one per line with what was done to it or \
what matters in it. Paths exactly as they appeared.

## Open work
What is unfinished or was asked and not done yet, and the very next step. Name anything \
the user is waiting for.

Be concrete and complete but brief: names, paths, numbers and commands over prose. If a \
previous summary is given, fold it in: keep what still holds and drop what is done or \
superseded."""

SUMMARY_REQUEST = (
    "Summarise the conversation transcript above following your instructions. "
    "Answer with the summary only."
)

SUMMARY_HEADER = (
    "[The earlier part of this conversation was compacted to fit the context window. "
    "This summary stands in for it; the messages after it are the most recent ones, "
    "unchanged.]"
)

# How much of one tool result, tool call or message the transcript keeps.
ITEM_CHARS = 2_000
MARKER = "[… {n} characters cut …]"


def summary_message(summary: str, covers: int, kept: int = 0) -> SummaryMessage:
    return SummaryMessage(f"{SUMMARY_HEADER}\n\n{summary.strip()}", covers=covers, kept=kept)


def summary_text(message: SummaryMessage) -> str:
    """The summary the model wrote, without the header this module put above it."""
    content = message.content
    if content.startswith(SUMMARY_HEADER):
        return content[len(SUMMARY_HEADER) :].lstrip("\n")
    return content


def summary_request_text(
    messages: Sequence[Message],
    previous: str | None,
    instructions: str = "",
    budget_chars: int | None = None,
) -> str:
    """The one user message of a summarisation request."""
    items = [_item(message) for message in messages]
    if budget_chars is not None:
        items = _fit(items, budget_chars)
    parts: list[str] = []
    if previous:
        parts.append(f"<previous-summary>\n{previous.strip()}\n</previous-summary>")
    parts.append("<transcript>\n" + "\n\n".join(items) + "\n</transcript>")
    request = SUMMARY_REQUEST
    if instructions.strip():
        request += f"\n\nThe user asks for this in particular: {instructions.strip()}"
    parts.append(request)
    return "\n\n".join(parts)


def _cut(text: str, limit: int = ITEM_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n" + MARKER.format(n=len(text) - 2 * half) + "\n" + text[-half:]


def _item(message: Message) -> str:
    if isinstance(message, AssistantMessage):
        lines = [f"[assistant]\n{_cut(message.text)}"] if message.text.strip() else []
        for call in message.tool_calls:
            arguments = call.raw_arguments or json.dumps(call.arguments)
            lines.append(f"[tool call {call.name}] {_cut(arguments)}")
        return "\n".join(lines) or "[assistant] (no text)"
    if isinstance(message, ToolResultMessage):
        error = " error" if message.is_error else ""
        return f"[tool result {message.tool_name}{error}]\n{_cut(message.content)}"
    who = "user" if message.source is None else f"message from extension {message.source}"
    return f"[{who}]\n{_cut(message.model_text(), ITEM_CHARS * 2)}"


def _fit(items: list[str], budget: int) -> list[str]:
    """Drop items from the middle until the rest fits: the start holds the goal, the end
    the latest state."""
    total = sum(len(item) + 2 for item in items)
    if total <= budget or len(items) <= 2:
        return items
    head, tail = [items[0]], list(items[1:])
    dropped = 0
    while tail and total > budget and len(tail) > 1:
        total -= len(tail.pop(0)) + 2
        dropped += 1
    return [*head, f"[… {dropped} messages left out to fit …]", *tail]
