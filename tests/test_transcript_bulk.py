"""BlockLines says once when a bulk arrival (a resumed session) is all measured."""

from __future__ import annotations

from rich.console import Console
from rich.style import Style
from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look
from ink_tui.ui.widgets.transcript_lines import DEFER_NEW_BLOCKS, BlockLines

LOOK = Look(Console(width=80), lambda name: Style())


class OneLine(Block):
    def render_lines(self, width: int, look: Look) -> list[Strip]:
        return [Strip.blank(width)]

    def plain_text(self) -> str:
        return "x"


def test_bulk_settled_once_after_a_bulk_arrival_is_measured() -> None:
    lines = BlockLines()
    for _ in range(DEFER_NEW_BLOCKS + 1):
        lines.append(OneLine())
    assert not lines.bulk_settled()
    lines.measure(80, LOOK, rows=5)
    while lines.reflowing:
        assert not lines.bulk_settled()
        lines.measure(80, LOOK, rows=5)
    assert lines.bulk_settled()
    assert not lines.bulk_settled()


def test_a_few_new_blocks_are_no_bulk() -> None:
    lines = BlockLines()
    for _ in range(3):
        lines.append(OneLine())
    lines.measure(80, LOOK, rows=5)
    assert not lines.reflowing
    assert not lines.bulk_settled()
