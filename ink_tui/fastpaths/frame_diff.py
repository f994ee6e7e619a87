"""What the terminal shows, remembered piece by piece, so a frame writes only what differs.

A widget asked to draw again is written again whole, even where it looks as before:
the transcript's scrollbar after every line the answer grows (38 rows for a thumb
that moved by an eighth of a cell, or not at all), the activity panel's two full-width
rows for a spinner's one character. `ScreenMemory` keeps each piece of a row that a
partial frame wrote (its cells and the strip drawn there); the next piece for the same
cells is compared with it, and only the cells from the first that differs to the end
of the last segment that differs are written. A piece that matches is not written at
all, not even the cursor move before it.

The memory holds only what is known: a frame that is not a partial one (a full
repaint, a resize, another screen) forgets everything; a piece written over part of
another forgets that one; rows the terminal scrolled (`terminal_scroll`) move with
the scroll, and the rows it brings in are unknown.

Touches nothing of a library's on its own: it works inside `terminal_scroll`'s frames
(the same wrapped `App._display`), and `check()` asks only for `Strip`'s equality.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip

Piece = tuple[int, int]
"""A piece's cells on its row: (first, end), the end excluded."""


def check() -> str | None:
    if Strip.__eq__ is object.__eq__:
        return "Strip has no equality of its own"
    return None


class ScreenMemory:
    """The pieces of rows as last written, by row; each piece's cells do not overlap."""

    __slots__ = ("_rows", "_screen")

    def __init__(self) -> None:
        self._rows: dict[int, dict[Piece, Strip]] = {}
        self._screen: object = None

    def forget(self) -> None:
        self._rows.clear()
        self._screen = None

    def frame_of(self, screen: object) -> None:
        """A frame of `screen` is to be written: another screen's pieces are no use."""
        if screen is not self._screen:
            self._rows.clear()
            self._screen = screen

    def shows(self, screen: object) -> bool:
        """The pieces held are `screen`'s (frames of another would forget them)."""
        return screen is self._screen

    def piece(self, y: int, start: int, stop: int) -> Strip | None:
        """The strip last written in exactly cells `start`..`stop` of row `y`, if known."""
        row = self._rows.get(y)
        return None if row is None else row.get((start, stop))

    def scrolled(self, top: int, bottom: int, shift: int) -> None:
        """Rows `top`..`bottom` (inclusive) moved up by `shift` (down when negative)."""
        moved: dict[int, dict[Piece, Strip]] = {}
        for y, pieces in self._rows.items():
            if not top <= y <= bottom:
                moved[y] = pieces
            elif top <= y - shift <= bottom:
                moved[y - shift] = pieces
        self._rows = moved

    def write(self, y: int, start: int, strip: Strip) -> tuple[int, Strip] | None:
        """`strip` is to be shown from cell `start` of row `y`: what to write (the first
        cell and its strip), or None when the terminal shows it already."""
        stop = start + strip.cell_length
        row = self._rows.setdefault(y, {})
        old = row.get((start, stop))
        if old is not None and old == strip:
            return None
        for piece in [piece for piece in row if piece[0] < stop and piece[1] > start]:
            del row[piece]
        row[(start, stop)] = strip
        if old is None or old.cell_length != strip.cell_length:
            return start, strip
        first, end = first_change(old, strip), last_change(old, strip)
        if first >= end:
            return start, strip
        if first == 0 and end == strip.cell_length:
            return start, strip
        return start + first, strip.crop(first, end)


def first_change(old: Strip | None, new: Strip | None) -> int:
    """The first cell at which `new` may differ from `old` on screen (0 when unsure).

    One character before the first that differs, so a mark that combines with the
    character before it (or a wide character split by the cut) is drawn whole.
    """
    if old is None or new is None:
        return 0
    cell = 0
    for before, after in zip(old, new, strict=False):
        if before == after:
            cell += before.cell_length
            continue
        if before.style == after.style and not before.control and not after.control:
            same = 0
            for a, b in zip(before.text, after.text, strict=False):
                if a != b:
                    break
                same += 1
            cell += cell_len(before.text[: max(0, same - 1)])
        return cell
    return cell


def last_change(old: Strip, new: Strip) -> int:
    """The cell after the last segment in which `new` differs from `old`, counted from
    the end (both as wide): segments split no character, so the cut splits none."""
    end = new.cell_length
    for before, after in zip(_reversed(old), _reversed(new), strict=False):
        if before != after:
            return end
        end -= after.cell_length
    return end


def _reversed(strip: Strip) -> Iterator[Segment]:
    return reversed(list(strip))
