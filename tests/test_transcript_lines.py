"""BlockLines: heights, offsets, the bounded line cache and reflow after a resize."""

from __future__ import annotations

import time

import pytest
from rich.console import Console
from rich.style import Style
from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look
from ink_tui.ui.widgets import transcript_lines
from ink_tui.ui.widgets.transcript_lines import BlockLines

LOOK = Look(Console(width=80), lambda name: Style())


class Lines(Block):
    """A block of `cells` cells of text: as many lines as the width needs."""

    def __init__(self, name: str, cells: int, cost_s: float = 0.0) -> None:
        super().__init__()
        self.name = name
        self.cells = cells
        self.cost_s = cost_s
        self.renders = 0
        self.dropped = 0

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        self.renders += 1
        if self.cost_s:
            time.sleep(self.cost_s)
        count = max(1, -(-self.cells // width))
        return [Strip.blank(width) for _ in range(count)]

    def plain_text(self) -> str:
        return self.name

    def drop_cache(self) -> None:
        self.dropped += 1


def test_offsets_follow_the_heights_and_only_changed_blocks_are_drawn_again() -> None:
    lines = BlockLines()
    a, b, c = Lines("a", 20), Lines("b", 35), Lines("c", 5)
    for block in (a, b, c):
        lines.append(block)
    lines.measure(10, LOOK)
    assert [lines.span(x) for x in (a, b, c)] == [(0, 2), (2, 4), (6, 1)]
    assert lines.height == 7
    assert lines.block_at(5) == (b, 2) and lines.block_at(7) is None
    b.cells = 10
    b.changed()
    lines.touch(b)
    lines.measure(10, LOOK)
    assert (a.renders, b.renders, c.renders) == (1, 2, 1)
    assert lines.span(c) == (3, 1) and lines.height == 4
    thinking = Lines("t", 10)
    lines.insert(1, thinking)
    lines.measure(10, LOOK)
    assert lines.blocks == [a, thinking, b, c]
    assert lines.span(c) == (4, 1)


def test_the_cache_keeps_a_bounded_number_of_lines_and_heights_stay_known() -> None:
    lines = BlockLines(max_cached_lines=10)
    blocks = [Lines(str(n), 30) for n in range(20)]  # three lines each at width 10
    for block in blocks:
        lines.append(block)
    lines.measure(10, LOOK)
    assert lines.height == 60
    assert lines._cached_lines <= 10
    assert sum(block.dropped for block in blocks) >= 16
    # An evicted block is drawn again when looked at, at the same height.
    first = blocks[0]
    renders = first.renders
    assert lines.line(0, LOOK) is not None
    assert first.renders == renders + 1
    assert lines.span(first) == (0, 3)


def test_a_new_width_measures_what_is_on_screen_now_and_the_rest_a_little_per_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transcript_lines, "REFLOW_BUDGET_S", 0.01)
    lines = BlockLines()
    blocks = [Lines(str(n), 40, cost_s=0.002) for n in range(200)]
    for block in blocks:
        lines.append(block)
    lines.measure(20, LOOK)  # two lines each
    while lines.reflowing:
        lines.measure(20, LOOK)
    assert lines.height == 400
    # The user reads block 50 from its second line; the view is 6 rows high.
    top = lines.span(blocks[50])[0] + 1
    for block in blocks:
        block.renders = 0
    changed, new_top = lines.measure(10, LOOK, top=top, rows=6)
    assert changed and lines.reflowing
    # Blocks 50 and 51 cover the view: measured now at four lines each.
    assert lines.span(blocks[50])[1] == 4 and lines.span(blocks[51])[1] == 4
    # The rest waits: within the budget, not all 200 at once.
    assert sum(block.renders for block in blocks) < 50
    # Whatever was measured above block 50, the view still starts on its second line.
    assert new_top == lines.span(blocks[50])[0] + 1
    rounds = 1
    while lines.reflowing:
        changed, new_top = lines.measure(10, LOOK, top=new_top, rows=6)
        rounds += 1
    assert rounds > 2
    assert lines.height == 800
    assert new_top == 50 * 4 + 1
    assert all(block.renders >= 1 for block in blocks)


def test_following_the_end_measures_the_last_blocks_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = BlockLines()
    blocks = [Lines(str(n), 40) for n in range(5)]
    for block in blocks:
        lines.append(block)
    lines.measure(20, LOOK)
    for block in blocks:
        block.renders = 0
    # No time for anything off screen: only the last three rows' blocks are measured.
    monkeypatch.setattr(transcript_lines, "REFLOW_BUDGET_S", 0.0)
    changed, top = lines.measure(10, LOOK, top=None, rows=5)
    assert changed and top is None and lines.reflowing
    assert [block.renders for block in blocks] == [0, 0, 0, 1, 1]


def test_reflow_of_some_blocks_draws_them_again_without_a_content_change() -> None:
    lines = BlockLines()
    a, b = Lines("a", 10), Lines("b", 10)
    lines.append(a)
    lines.append(b)
    lines.measure(10, LOOK)
    lines.reflow([a])
    assert lines.reflowing
    lines.measure(10, LOOK)
    assert (a.renders, b.renders) == (2, 1) and not lines.reflowing


def test_many_new_blocks_at_once_are_measured_from_the_end_a_few_per_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transcript_lines, "REFLOW_BUDGET_S", 0.005)
    lines = BlockLines()
    blocks = [Lines(str(n), 40, cost_s=0.001) for n in range(300)]
    for block in blocks:
        lines.append(block)
    changed, top = lines.measure(20, LOOK, top=None, rows=10)
    assert changed and top is None and lines.reflowing
    # The last screen is exact at once; most of the session waits for later frames.
    assert all(lines.span(block)[1] == 2 for block in blocks[-5:])
    assert sum(block.renders for block in blocks) < 100
    while lines.reflowing:
        lines.measure(20, LOOK, top=None, rows=10)
    assert lines.height == 600 and all(block.renders == 1 for block in blocks)
    # A few new blocks are measured at once, as when a run appends them.
    more = [Lines("m", 40) for _ in range(3)]
    for block in more:
        lines.append(block)
    lines.measure(20, LOOK, top=None, rows=10)
    assert not lines.reflowing and lines.height == 606
