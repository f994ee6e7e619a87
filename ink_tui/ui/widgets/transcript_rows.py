"""What the transcript makes of a block's line to draw it as a row of the screen.

A row is the line on the widget's background with each cell's offset in its style (for a
mouse selection), kept by `PlacedRows` for the rows drawn lately; over it go the
new-output marker and a mouse selection (pure functions of strips, so the widget only
decides when they apply).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Offset, Region
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from ink_tui import fastpaths
from ink_tui.ui.blocks.block import Look

if TYPE_CHECKING:
    from ink_tui.fastpaths.textual_styles_cache import KeptRowsStylesCache

MARKER_TEXT = " ↓ new output below "
# Screens of rows kept placed: paging back and forth draws nothing new. No more: every
# strip is a dozen objects (Textual gives each its own caches) the collector walks.
SCREENS_KEPT = 3


# Where the marker starts on the last row; a click on it jumps to the end.
MARKER_X = 2


@dataclass(frozen=True, slots=True)
class RowView:
    """What drawing a row of the transcript needs from the widget, worked out once a
    frame: each of these builds new objects when asked, and a frame asks for every row."""

    content: Region
    top: int
    look: Look
    base: Style
    selection: Selection | None
    selection_style: Style | None


def on_marker(x: int) -> bool:
    return MARKER_X <= x < MARKER_X + len(MARKER_TEXT)


def placed(line: Strip, line_no: int, base: Style) -> Strip:
    """`line` drawn as line `line_no`: on the `base` style, each cell knowing its offset."""
    if _placed_fast is not None:
        return _placed_fast(line, line_no, base)
    return line.apply_offsets(0, line_no).apply_style(base)


def _fast_placed() -> Callable[[Strip, int, Style], Strip] | None:
    if not fastpaths.enabled("placed_rows"):
        return None
    from ink_tui.fastpaths.rich_style_sum import placed as placed_fast

    return placed_fast


_placed_fast = _fast_placed()


class StockFrames:
    """Textual's own styles cache framing the rows (the `styles_cache` fast path off)."""

    def set_limit(self, limit: int) -> None:
        pass

    def forget(self) -> None:
        pass


def kept_rows_cache(widget: Widget, limit: int) -> KeptRowsStylesCache | StockFrames:
    """What frames `widget`'s rows: a cache that keeps them, where Textual's is as the
    fast path was written for."""
    if not fastpaths.enabled("styles_cache"):
        return StockFrames()
    from ink_tui.fastpaths.textual_styles_cache import KeptRowsStylesCache

    return KeptRowsStylesCache.install(widget, limit)


class PlacedRows:
    """The rows drawn lately (least recently drawn dropped first), by line number: a page
    scrolled back to costs no new strip.

    A row stays valid while its line is the very strip the block drew (a redrawn block
    draws new ones) on the same background style.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._rows: dict[int, tuple[Strip, Style, Strip]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def set_limit(self, limit: int) -> None:
        """Keep at most `limit` rows from now on (the screen's height changed)."""
        self._limit = max(1, limit)
        while len(self._rows) > self._limit:
            del self._rows[next(iter(self._rows))]

    def row(self, line: Strip, line_no: int, base: Style) -> Strip:
        rows = self._rows
        kept = rows.pop(line_no, None)
        if kept is not None and kept[0] is line and kept[1] is base:
            # Back in at the end: the row drawn longest ago goes first, so a page looked
            # at lately outlives the pages scrolled through since.
            rows[line_no] = kept
            return kept[2]
        strip = placed(line, line_no, base)
        if len(rows) >= self._limit:
            del rows[next(iter(rows))]
        rows[line_no] = (line, base, strip)
        return strip

    def clear(self) -> None:
        self._rows.clear()


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
