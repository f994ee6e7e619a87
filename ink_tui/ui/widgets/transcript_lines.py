"""The transcript's blocks as one column of lines: heights, offsets and a bounded cache.

`BlockLines` knows, for the current width, where every block starts and how high it is.
Only changed blocks are measured again (by drawing them), and the offsets are summed
again from the first changed block on, so appending to a long session costs the new
block, not the session. Drawn lines are kept in a least-recently-used cache bounded by a
line count: heights stay known for every block, lines only for the ones looked at lately.

A new width (or theme) changes every block's height, and a resumed session brings
thousands of blocks at once. Measuring them all in one go would freeze the app for
seconds, so the blocks the user looks at are measured at once and the rest a few
milliseconds per frame, keeping their old heights (or none, for new ones) meanwhile as
an estimate ("reflow").
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator, Sequence

from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look

# About ten screens of a tall terminal; the rest is drawn again when scrolled back to.
# Every drawn line is some forty objects the garbage collector walks on each pass.
MAX_CACHED_LINES = 600
# Time per frame spent measuring blocks off screen after a resize.
REFLOW_BUDGET_S = 0.008
UNMEASURED = -1
# More new blocks than this in one frame are measured a few at a time (see `measure`).
DEFER_NEW_BLOCKS = 50


class BlockLines:
    def __init__(self, max_cached_lines: int = MAX_CACHED_LINES) -> None:
        self._max_cached_lines = max_cached_lines
        # block -> (version drawn, lines, weight counted when cached)
        self._cache: OrderedDict[Block, tuple[int, Sequence[Strip], int]] = OrderedDict()
        self.clear()

    def clear(self) -> None:
        """Forget every block."""
        for block in self._cache:
            block.drop_cache()
        self._cache.clear()
        self._cached_lines = 0
        self.width = 0
        self.blocks: list[Block] = []
        self._heights: list[int] = []
        # The width each block was measured at: UNMEASURED (or an old width) means its
        # height is only an estimate.
        self._widths: list[int] = []
        self._starts: list[int] = [0]
        self._position: dict[int, int] = {}
        # Blocks whose content changed: measured at the next `measure`, whatever it costs.
        self._stale: dict[Block, None] = {}
        # The first offset to sum again, and the next block to reflow (downwards).
        self._dirty_from: int | None = None
        self._reflow_next = -1
        # Many new blocks came at once (a resumed session) and are being measured.
        self._bulk = False

    def __len__(self) -> int:
        return len(self.blocks)

    def __iter__(self) -> Iterator[Block]:
        return iter(self.blocks)

    @property
    def height(self) -> int:
        return self._starts[-1] if self._dirty_from is None else sum(self._heights)

    @property
    def reflowing(self) -> bool:
        """Some heights are still estimates: `measure` has more to do."""
        return self._reflow_next >= 0

    def append(self, block: Block) -> None:
        self.insert(len(self.blocks), block)

    def insert(self, index: int, block: Block) -> None:
        self.blocks.insert(index, block)
        self._heights.insert(index, 0)
        self._widths.insert(index, UNMEASURED)
        if index == len(self.blocks) - 1:
            self._position[id(block)] = index
        else:
            self._position = {id(b): i for i, b in enumerate(self.blocks)}
            if self._reflow_next >= index:
                self._reflow_next += 1
        self._mark(index)
        self._stale[block] = None

    def index(self, block: Block) -> int | None:
        return self._position.get(id(block))

    def touch(self, block: Block) -> None:
        """`block` changed: measure it again at the next `measure`."""
        if id(block) in self._position:
            self._stale[block] = None

    def touch_all(self) -> None:
        """Every block is drawn again (new theme), reflowed a few at a time."""
        for block in self._cache:
            block.drop_cache()
        self._cache.clear()
        self._cached_lines = 0
        self._widths = [UNMEASURED] * len(self.blocks)
        self._reflow_next = len(self.blocks) - 1

    def reflow(self, blocks: list[Block]) -> None:
        """`blocks` are drawn differently (a view option): reflowed a few at a time."""
        for block in blocks:
            index = self._position.get(id(block))
            if index is None:
                continue
            self._uncache(block)
            self._widths[index] = UNMEASURED
            self._reflow_next = max(self._reflow_next, index)

    def measure(
        self, width: int, look: Look, *, top: int | None = None, rows: int = 0
    ) -> tuple[bool, int | None]:
        """Measure what changed at `width`; returns (anything changed, the new `top`).

        `top` is the first line on screen, or None when the view follows the end; the
        blocks on the `rows` lines from there are measured exactly, and `top` is moved
        with the block it points into, so reflowing what is above never moves the text
        the user is reading.
        """
        if width != self.width:
            self.width = width
            self.touch_all()
        if not self._stale and not self.reflowing:
            return False, top
        anchor = self._anchor(top)
        stale, self._stale = self._stale, {}
        # Many new blocks at once (a resumed session) are measured like a reflow: what
        # is on screen now, the rest a little per frame. A few are measured at once.
        defer_new = len(stale) > DEFER_NEW_BLOCKS
        self._bulk = self._bulk or defer_new
        for block in stale:
            index = self._position.get(id(block))
            if index is None:
                continue
            if defer_new and self._widths[index] == UNMEASURED:
                self._reflow_next = max(self._reflow_next, index)
            else:
                self._measure_at(index, look)
        if self.reflowing:
            self._measure_window(anchor, rows, look)
            deadline = time.perf_counter() + REFLOW_BUDGET_S
            while self._reflow_next >= 0 and time.perf_counter() < deadline:
                if self._widths[self._reflow_next] != self.width:
                    self._measure_at(self._reflow_next, look)
                self._reflow_next -= 1
        self._sum_offsets()
        if anchor is None:
            return True, None
        index, offset = anchor
        return True, self._starts[index] + min(offset, max(0, self._heights[index] - 1))

    def bulk_settled(self) -> bool:
        """True once, when the blocks of a bulk arrival (see `measure`) are all measured."""
        if not self._bulk or self.reflowing:
            return False
        self._bulk = False
        return True

    def line(self, y: int, look: Look) -> Strip | None:
        """Line `y` of the whole column, or None past the end."""
        # Asked for every row of every frame: no (block, start) tuple made on the way.
        index = self._index_at(y)
        if index is None:
            return None
        lines = self.lines_of(self.blocks[index], look)
        offset = y - self._starts[index]
        return lines[offset] if offset < len(lines) else None

    def block_at(self, y: int) -> tuple[Block, int] | None:
        """The block drawn on line `y`, and the line it starts on."""
        index = self._index_at(y)
        return None if index is None else (self.blocks[index], self._starts[index])

    def span(self, block: Block) -> tuple[int, int] | None:
        """First line and height of `block`."""
        index = self._position.get(id(block))
        if index is None:
            return None
        return self._starts[index], self._heights[index]

    def lines_of(self, block: Block, look: Look) -> Sequence[Strip]:
        """The lines `block` is drawn as, from the cache when it is up to date."""
        cached = self._cache.get(block)
        if cached is not None and cached[0] == block.version:
            self._cache.move_to_end(block)
            return cached[1]
        return self._draw(block, look)

    def _index_at(self, y: int) -> int | None:
        if y < 0 or y >= self.height:
            return None
        index = bisect_right(self._starts, y) - 1
        # Blocks of no height (hidden reasoning) share their start with the next one.
        while index < len(self.blocks) - 1 and self._heights[index] == 0:
            index += 1
        return index

    def _anchor(self, top: int | None) -> tuple[int, int] | None:
        self._sum_offsets()
        if top is None:
            return None
        index = self._index_at(top)
        return None if index is None else (index, top - self._starts[index])

    def _measure_window(self, anchor: tuple[int, int] | None, rows: int, look: Look) -> None:
        """Measure the blocks on screen: down from the anchor, or up from the end."""
        if anchor is None:
            indexes = range(len(self.blocks) - 1, -1, -1)
        else:
            indexes = range(anchor[0], len(self.blocks))
        covered = -anchor[1] if anchor is not None else 0
        for index in indexes:
            if covered >= rows:
                break
            if self._widths[index] != self.width:
                self._measure_at(index, look)
            covered += self._heights[index]

    def _measure_at(self, index: int, look: Look) -> None:
        lines = self._draw(self.blocks[index], look)
        self._widths[index] = self.width
        if len(lines) != self._heights[index]:
            self._heights[index] = len(lines)
            self._mark(index)

    def _draw(self, block: Block, look: Look) -> Sequence[Strip]:
        lines = block.render_lines(self.width, look)
        self._uncache(block)
        weight = _weight(lines)
        self._cache[block] = (block.version, lines, weight)
        self._cached_lines += weight
        # The newest block always stays, however long it is.
        while self._cached_lines > self._max_cached_lines and len(self._cache) > 1:
            evicted, (_, _, evicted_weight) = self._cache.popitem(last=False)
            self._cached_lines -= evicted_weight
            evicted.drop_cache()
        return lines

    def _uncache(self, block: Block) -> None:
        cached = self._cache.pop(block, None)
        if cached is not None:
            self._cached_lines -= cached[2]

    def _mark(self, index: int) -> None:
        if self._dirty_from is None or index < self._dirty_from:
            self._dirty_from = index

    def _sum_offsets(self) -> None:
        start = self._dirty_from
        if start is None:
            return
        self._dirty_from = None
        del self._starts[start + 1 :]
        total = self._starts[start]
        for height in self._heights[start:]:
            total += height
            self._starts.append(total)


def _weight(lines: Sequence[Strip]) -> int:
    """Lines held in memory: a lazy sequence says so itself (see `Block.render_lines`)."""
    weight = getattr(lines, "weight", None)
    return len(lines) if weight is None else int(weight)
