"""On a very wide terminal answer prose wraps at a readable measure; a table or wide code
keeps the whole width."""

from __future__ import annotations

from rich.console import Console
from rich.style import Style

from ink_tui.ui.blocks.answer_block import PROSE_MEASURE, _markdown_lines
from ink_tui.ui.blocks.block import Look

LOOK = Look(Console(width=300), lambda name: Style())
WIDTH = 300
PROSE = "The cart keeps its items in a plain list and computes the total on demand. " * 8


def text_width(line: object) -> int:
    return len(line.text.rstrip())  # type: ignore[attr-defined]


def test_prose_wraps_at_the_measure_and_every_line_fills_the_width() -> None:
    lines = _markdown_lines(PROSE, WIDTH, LOOK)
    assert len(lines) > 1
    assert max(text_width(line) for line in lines) <= PROSE_MEASURE + 2
    assert all(line.cell_length == WIDTH for line in lines)


def test_a_table_keeps_the_whole_width() -> None:
    cells = " | ".join(f"column {n} with a long heading" for n in range(6))
    table = f"{PROSE}\n\n| {cells} |\n|{'---|' * 6}\n| {' | '.join(['x'] * 6)} |\n"
    lines = _markdown_lines(table, WIDTH, LOOK)
    assert max(text_width(line) for line in lines) > PROSE_MEASURE + 2


def test_narrow_terminals_are_untouched() -> None:
    lines = _markdown_lines(PROSE, 80, LOOK)
    assert max(text_width(line) for line in lines) > 70
