"""Which rows of the transcript a frame must draw again, and which the terminal keeps.

A transcript that follows a streaming answer changes one or two rows a frame: the line
being written, and, when the answer wraps to a new line, every row moves up by one.
Refreshing the whole widget for that drew every row again, some 95 times a second
(figure 10 in benchmarks/README.md: ~900 terminal bytes per answer character). Here the
rows of the last frame are kept (the line each showed, a `Strip` the transcript's line
cache hands out again while the line is unchanged) and compared with this frame's,
allowing for a scroll: only the rows that differ are refreshed. A scroll itself is left
to the terminal when it can do it (`ink_tui.fastpaths.terminal_scroll`, which moves the
rows on screen by a scroll region); otherwise the whole view is drawn, as before.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from textual.strip import Strip

from ink_tui.fastpaths.frame_diff import first_change

Row = Strip | None


@dataclass(frozen=True, slots=True)
class Plan:
    """What to draw: everything (`full`), or the terminal's rows moved up by `shift`
    (down when negative) and then `spans` drawn again: (row, first cell, rows), each to
    the end of its rows (a line that grew is drawn from where it changed)."""

    full: bool
    shift: int = 0
    spans: tuple[tuple[int, int, int], ...] = ()


FULL = Plan(full=True)


@dataclass(frozen=True, slots=True)
class _Drawn:
    top: int
    rows: Sequence[Row]
    frame: Hashable


def _same(old: Row, new: Row) -> bool:
    return old is new or (old is not None and new is not None and old == new)


def _spans(changed: list[tuple[int, int]]) -> tuple[tuple[int, int, int], ...]:
    spans: list[tuple[int, int, int]] = []
    for row, cell in changed:
        if cell == 0 and spans and spans[-1][1] == 0 and sum(spans[-1][::2]) == row:
            spans[-1] = (spans[-1][0], 0, spans[-1][2] + 1)
        else:
            spans.append((row, cell, 1))
    return tuple(spans)


class RowRepaint:
    """The rows the terminal shows, as of the last plan; `forget` when that is unknown."""

    def __init__(self) -> None:
        self._drawn: _Drawn | None = None

    def forget(self) -> None:
        """The whole view is being drawn by other means: compare with nothing next time."""
        self._drawn = None

    def plan(self, top: int, rows: Sequence[Row], frame: Hashable | None) -> Plan:
        """Rows `rows` from line `top` on are to be shown; `frame` is everything else a
        row's drawing depends on (None: something that makes every row unlike before,
        such as a text selection)."""
        old, self._drawn = self._drawn, None if frame is None else _Drawn(top, rows, frame)
        if old is None or frame is None or old.frame != frame or len(old.rows) != len(rows):
            return FULL
        height = len(rows)
        shift = top - old.top
        if abs(shift) >= height:
            return FULL
        changed: list[tuple[int, int]] = []
        for row, new in enumerate(rows):
            before = old.rows[row + shift] if 0 <= row + shift < height else None
            if before is None and new is None and 0 <= row + shift < height:
                continue
            if not _same(before, new):
                changed.append((row, first_change(before, new)))
        return Plan(full=False, shift=shift, spans=_spans(changed))
