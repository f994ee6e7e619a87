"""What the transcript lays over its rows: the new-output marker and a mouse selection.

Pure functions of strips, so the widget only decides when they apply.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip

MARKER_TEXT = " ↓ new output below "
# Where the marker starts on the last row; a click on it jumps to the end.
MARKER_X = 2


def on_marker(x: int) -> bool:
    return MARKER_X <= x < MARKER_X + len(MARKER_TEXT)


def with_marker(strip: Strip, width: int, style: Style) -> Strip:
    """`strip` with the marker drawn over it (cut to `width`)."""
    end = min(width, MARKER_X + len(MARKER_TEXT))
    marker = Strip([Segment(MARKER_TEXT[: end - MARKER_X], style)])
    return Strip.join([strip.crop(0, MARKER_X), marker, strip.crop(end, width)])


def with_selection(strip: Strip, selection: Selection, line_no: int, style: Style) -> Strip:
    """`strip` (line `line_no` of the transcript) with its selected part in `style`."""
    span = selection.get_span(line_no)
    if span is None:
        return strip
    start, end = span
    end = strip.cell_length if end == -1 else end
    middle = strip.crop(start, end)
    marked = Strip(Segment.apply_style(iter(middle), post_style=style), middle.cell_length)
    return Strip.join([strip.crop(0, start), marked, strip.crop(end, strip.cell_length)])


def selected_text(selection: Selection, line_text: Callable[[int], str], last_line: int) -> str:
    """The text under `selection`, asking `line_text` for only the lines it spans."""
    first_y = selection.start.y if selection.start is not None else 0
    last_y = min(selection.end.y if selection.end is not None else last_line, last_line)
    texts = [line_text(y).rstrip() for y in range(first_y, last_y + 1)]
    # The same selection, counted from the first line taken.
    shifted = Selection(
        selection.start and Offset(selection.start.x, 0),
        selection.end and Offset(selection.end.x, selection.end.y - first_y),
    )
    return shifted.extract("\n".join(texts))
