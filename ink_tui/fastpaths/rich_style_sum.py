"""A transcript row placed on its background in one strip, with no one-off style cached.

Touches: rich's `Style._add` (private), whose `lru_cache` wrapper is skipped through its
`__wrapped__`: a style carrying a cell's offset is used by one cell only, and would push
out sums that are used again. And `Strip._segments` (private), read without the copy
`Strip.__iter__` would not make either, but for the attribute's name. `check()` looks for
both; refused, a row is `line.apply_offsets(0, line_no).apply_style(base)`, the same
segments (tests/test_transcript_rows.py) in two strips, every sum through rich's cache.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip


def check() -> str | None:
    wrapped = getattr(Style._add, "__wrapped__", None)
    if wrapped is None:
        return "rich Style._add has no lru_cache wrapper (__wrapped__)"
    if tuple(inspect.signature(wrapped).parameters) != ("self", "style"):
        return f"rich Style._add takes {tuple(inspect.signature(wrapped).parameters)}"
    probe = Strip([Segment("x")])
    if not isinstance(getattr(probe, "_segments", None), list):
        return "textual Strip keeps no _segments list"
    return None


def placed(line: Strip, line_no: int, base: Style) -> Strip:
    """`line` drawn as line `line_no`: on the `base` style, each cell knowing its offset.

    The same segments as `line.apply_offsets(0, line_no).apply_style(base)`, in one new
    strip instead of two, and with no sum of a one-off style left in rich's cache.
    """
    add_once: Callable[[Style, Style], Style] = Style._add.__wrapped__
    segments: list[Segment] = []
    append = segments.append
    x = 0
    for text, style, _control in line._segments:
        combined = base + style if style else base
        offset = Style.from_meta({"offset": (x, line_no)})
        final = add_once(combined, offset)
        # As `Style.__add__`: a link gets an id of its own.
        append(Segment(text, final.copy() if final.link else final))
        x += len(text)
    return Strip(segments, line.cell_length)
