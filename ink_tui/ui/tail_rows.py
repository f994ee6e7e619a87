"""How much of a session's end fills the screen: the rows entries take at least.

A resumed session's end is drawn before anything else (`session_tail`), and each answer
in it is markdown to render, its code fences highlighted (pygments builds a language's
lexer on first use: some 20 ms). Only what fills the screen needs drawing then. The
counts here are lower bounds of what the transcript draws (it is narrower than the
screen, and markdown adds rows), so entries that add up to the screen's height fill it.

`ScreenFill` takes entries newest first. The one that crosses the top of the screen is
kept with only its end: an answer's last paragraphs (never cut inside a code fence) and
its tool calls, without the thinking above them. Nothing of it that is cut would have
been on screen; the whole session replaces the preview once it is read.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ink_tui.session.entries import AssistantEntry, Entry, ToolResultEntry, UserEntry
from ink_tui.ui.blocks.fold_view import HEAD_LINES, SHORT_LINES

# The blank row between two blocks of the transcript.
GAP = 1
_FENCES = ("```", "~~~")
# A paragraph with a line that starts so is a list, a table or a fence: a row a line.
_OWN_ROW = ("- ", "* ", "+ ", "|", *_FENCES)


class ScreenFill:
    """Counts entries, newest first, against a screen `width` x `height`."""

    def __init__(self, width: int, height: int) -> None:
        self.width = max(1, width)
        self.rows_left = height
        # Rows of results whose call is not counted yet (a result follows its call).
        self._results: dict[str, int] = {}

    @property
    def full(self) -> bool:
        return self.rows_left <= 0

    def take(self, entry: Entry) -> Entry:
        """`entry`, counted; cut to its end if it crosses the top of the screen."""
        if isinstance(entry, ToolResultEntry):
            self._results[entry.message.call_id] = _result_rows(entry)
            return entry
        if isinstance(entry, AssistantEntry):
            entry = self._take_answer(entry)
        else:
            self.rows_left -= least_rows(entry, self.width)
        return entry

    def _take_answer(self, entry: AssistantEntry) -> AssistantEntry:
        message = entry.message
        calls = sum(GAP + 1 + self._results.pop(call.id, 0) for call in message.tool_calls)
        text = text_rows(message.text, self.width)
        room = self.rows_left - calls
        self.rows_left -= calls + (GAP + text if text else 0)
        if text and room < GAP + text:
            return replace(
                entry,
                message=replace(
                    message, text=ending(message.text, room - GAP, self.width), thinking=""
                ),
            )
        return entry


def least_rows(entry: Entry, width: int) -> int:
    """The rows a user entry, a notice or an answer (with its calls) takes at least."""
    if isinstance(entry, UserEntry):
        return GAP + sum(
            max(1, math.ceil(len(line) / width))
            for line in entry.message.content.splitlines() or [""]
        )
    if isinstance(entry, AssistantEntry):
        text = text_rows(entry.message.text, width)
        return (GAP + text if text else 0) + (GAP + 1) * len(entry.message.tool_calls)
    if isinstance(entry, ToolResultEntry):
        return _result_rows(entry)
    return GAP + 1


def _result_rows(entry: ToolResultEntry) -> int:
    # Shown under its call: whole when short, else folded (fold_view.py) to at least
    # its first HEAD_LINES lines and a count; a diff instead for edits; at least a line.
    if "diff" in entry.details:
        return 1
    lines = entry.message.content.count("\n") + 1
    return lines if lines <= SHORT_LINES else HEAD_LINES + 1


def text_rows(text: str, width: int) -> int:
    """Markdown joins a paragraph's lines: it takes at least its length over `width`;
    lists, tables and code take a row a line. The blank rows between paragraphs are
    not counted (a list's items have none)."""
    return sum(_chunk_rows(chunk, width) for chunk in chunks(text))


def _chunk_rows(chunk: str, width: int) -> int:
    lines = chunk.splitlines()
    if any(line.lstrip().startswith(_OWN_ROW) for line in lines):
        # A fence's own lines (```) are not drawn.
        drawn = [line for line in lines if not line.lstrip().startswith(_FENCES)]
        return sum(max(1, math.ceil(len(line) / width)) for line in drawn)
    return math.ceil(len(chunk.strip()) / width)


def chunks(text: str) -> list[str]:
    """`text` parted at its blank lines, except those inside a code fence."""
    parts: list[str] = []
    current: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith(_FENCES):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                parts.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        parts.append("\n".join(current))
    return parts


def ending(text: str, rows: int, width: int) -> str:
    """The last paragraphs of `text` that take at least `rows` rows (none for rows <= 0)."""
    kept: list[str] = []
    for chunk in reversed(chunks(text)):
        if rows <= 0:
            break
        kept.append(chunk)
        rows -= _chunk_rows(chunk, width)
    return "\n\n".join(reversed(kept))
