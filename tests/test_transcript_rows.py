"""Rows of the transcript drawn once per line number (ink_tui/ui/widgets/transcript_rows.py)."""

from __future__ import annotations

import re

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ink_tui.ui.widgets import transcript_rows
from ink_tui.ui.widgets.transcript_rows import PlacedRows, placed
from tests.fastpath_helpers import needs_fast_path

CONSOLE = Console(color_system="truecolor", force_terminal=True, width=80)
BASE = Style(color="#eeeeee", bgcolor="#101010")


def _no_ids(ansi: str) -> str:
    return re.sub(r"id=\d+;", "id=;", ansi)


def line() -> Strip:
    return Strip(
        [
            Segment("plain "),
            Segment("bold ", Style(bold=True, color="red")),
            Segment("link", Style(link="https://example.com", underline=True)),
            Segment("  ", Style(bgcolor="#202020")),
        ]
    )


def test_a_placed_line_is_the_offset_line_on_the_base_style() -> None:
    strip = line()
    for y in (0, 7, 12345):
        expected = strip.apply_offsets(0, y).apply_style(BASE)
        got = placed(strip, y, BASE)
        assert list(got) == list(expected)
        assert got.cell_length == expected.cell_length
        assert [s.style.meta for s in got] == [s.style.meta for s in expected]  # type: ignore[union-attr]
        # A link gets a new id on every copy, whichever way it is made.
        assert _no_ids(got.render(CONSOLE)) == _no_ids(expected.render(CONSOLE))


@needs_fast_path("placed_rows")
def test_a_placed_line_leaves_no_one_off_sums_in_the_shared_style_cache() -> None:
    strip = line()
    placed(strip, 0, BASE)
    size = Style._add.cache_info().currsize  # type: ignore[attr-defined]
    for y in range(1, 100):
        placed(strip, y, BASE)
    assert Style._add.cache_info().currsize == size  # type: ignore[attr-defined]


def test_rows_are_kept_per_line_number_while_the_line_and_base_stay() -> None:
    rows = PlacedRows(limit=3)
    blank = Strip.blank(10)
    # One shared blank strip at many line numbers: each row is its own.
    first = rows.row(blank, 1, BASE)
    second = rows.row(blank, 2, BASE)
    assert first is not second
    assert rows.row(blank, 1, BASE) is first
    # A redrawn line (a new strip) or a new base style places it again.
    assert rows.row(Strip.blank(10, Style(bold=True)), 1, BASE) is not first
    other_base = Style(bgcolor="#000000")
    assert rows.row(blank, 2, other_base) is not second


def test_the_oldest_row_goes_once_the_limit_is_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []

    def counted(line: Strip, line_no: int, base: Style) -> Strip:
        made.append(line_no)
        return placed(line, line_no, base)

    monkeypatch.setattr(transcript_rows, "placed", counted)
    rows = PlacedRows(limit=2)
    strip = line()
    rows.row(strip, 1, BASE)
    rows.row(strip, 2, BASE)
    rows.row(strip, 3, BASE)
    assert len(rows) == 2
    rows.row(strip, 3, BASE)
    rows.row(strip, 1, BASE)
    assert made == [1, 2, 3, 1]  # row 3 was kept, row 1 had gone and was placed again
    rows.set_limit(1)
    assert len(rows) == 1
    rows.clear()
    assert len(rows) == 0
