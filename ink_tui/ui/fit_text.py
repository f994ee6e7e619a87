"""Fit a line of parts into a width: the least important parts go first, and a part that
is cut is cut at a word boundary and ends with "…", never mid-word without it.

Used by the hint row and the status bar; plain `rich.text.Text`, no other import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

ELLIPSIS = "…"
SEPARATOR = "  ·  "


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the line; a higher `priority` stays longer."""

    text: Text
    priority: int = 0


def elide(text: Text, width: int) -> Text:
    """`text` cut to `width` cells at a word boundary, ending with "…" when cut."""
    if width <= 0:
        return Text()
    if text.cell_len <= width:
        return text.copy()
    if width == 1:
        return Text(ELLIPSIS, style=text.style)
    plain = text.plain
    # The longest prefix that fits with the ellipsis, then back to its last space.
    end = 0
    used = 0
    for index, char in enumerate(plain):
        used += cell_len(char)
        if used > width - 1:
            break
        end = index + 1
    space = plain.rfind(" ", 0, end + 1)
    if space > 0 and plain[:space].strip():
        end = space
    head = text[:end]
    head.rstrip()
    head.append(ELLIPSIS)
    return head


def fit_parts(
    parts: Sequence[Part], width: int, separator: str = SEPARATOR, separator_style: str = "dim"
) -> Text:
    """The parts in their order, joined by `separator`, within `width` cells: the lowest
    priority (the later one on a tie) goes first; the last one left is elided."""
    kept = list(range(len(parts)))

    def joined() -> Text:
        line = Text(no_wrap=True, overflow="crop")
        for n, index in enumerate(kept):
            if n:
                line.append(separator, style=separator_style)
            line.append_text(parts[index].text)
        return line

    line = joined()
    while line.cell_len > width and len(kept) > 1:
        drop = min(kept, key=lambda i: (parts[i].priority, -i))
        kept.remove(drop)
        line = joined()
    if line.cell_len > width:
        line = elide(line, width)
        line.no_wrap = True
    return line
