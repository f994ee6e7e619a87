"""The transcript's blocks as one column of lines: heights, offsets and a bounded cache.

`BlockLines` knows, for the current width, where every block starts and how high it is.
Only changed blocks are measured again (by drawing them), and the offsets are summed
again from the first changed block on, so appending to a long session costs the new
block, not the session. Drawn lines are kept in a least-recently-used cache bounded by a
line count: heights stay known for every block, lines only for the ones looked at lately.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator

from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look

# About ten screens of a tall terminal; the rest is drawn again when scrolled back to.
MAX_CACHED_LINES = 2000


class BlockLines:
    def __init__(self, max_cached_lines: int = MAX_CACHED_LINES) -> None:
        self._max_cached_lines = max_cached_lines
        self.width = 0
        self.clear()

    def clear(self) -> None:
        """Forget every block."""
        for block in getattr(self, "_cache", ()):
            block.drop_cache()
        self.blocks: list[Block] = []
        self._heights: list[int] = []
        self._starts: list[int] = [0]
        self._position: dict[int, int] = {}
        # Blocks to measure again; `_dirty_from` is the first offset to sum again.
        self._stale: dict[Block, None] = {}
        self._dirty_from: int | None = None
        self._cache: OrderedDict[Block, tuple[int, list[Strip]]] = OrderedDict()
        self._cached_lines = 0

    def __len__(self) -> int:
        return len(self.blocks)

    def __iter__(self) -> Iterator[Block]:
        return iter(self.blocks)

    @property
    def height(self) -> int:
        return self._starts[-1] if self._dirty_from is None else sum(self._heights)

    @property
    def pending(self) -> bool:
        return bool(self._stale)

    def append(self, block: Block) -> None:
        self.insert(len(self.blocks), block)

    def insert(self, index: int, block: Block) -> None:
        self.blocks.insert(index, block)
        self._heights.insert(index, 0)
        if index == len(self.blocks) - 1:
            self._position[id(block)] = index
        else:
            self._position = {id(b): i for i, b in enumerate(self.blocks)}
        self._mark(index)
        self._stale[block] = None

    def index(self, block: Block) -> int | None:
        return self._position.get(id(block))

    def touch(self, block: Block) -> None:
        """`block` changed: measure it again at the next `measure`."""
        if id(block) in self._position:
            self._stale[block] = None

    def touch_all(self) -> None:
        """Everything is drawn again (new width, theme or view option)."""
        for block in self._cache:
            block.drop_cache()
        self._cache.clear()
        self._cached_lines = 0
        self._stale = dict.fromkeys(self.blocks)

    def measure(self, width: int, look: Look) -> bool:
        """Measure the changed blocks at `width`; True if any line may have changed."""
        if width != self.width:
            self.width = width
            self.touch_all()
        if not self._stale:
            return False
        stale, self._stale = self._stale, {}
        for block in stale:
            index = self._position.get(id(block))
            if index is None:
                continue
            lines = self._draw(block, look)
            if len(lines) != self._heights[index]:
                self._heights[index] = len(lines)
                self._mark(index)
        self._sum_offsets()
        return True

    def line(self, y: int, look: Look) -> Strip | None:
        """Line `y` of the whole column, or None past the end."""
        found = self.block_at(y)
        if found is None:
            return None
        block, start = found
        lines = self.lines_of(block, look)
        offset = y - start
        return lines[offset] if offset < len(lines) else None

    def block_at(self, y: int) -> tuple[Block, int] | None:
        """The block drawn on line `y`, and the line it starts on."""
        if y < 0 or y >= self.height:
            return None
        index = bisect_right(self._starts, y) - 1
        # Blocks of no height (hidden reasoning) share their start with the next one.
        while index < len(self.blocks) - 1 and self._heights[index] == 0:
            index += 1
        return self.blocks[index], self._starts[index]

    def span(self, block: Block) -> tuple[int, int] | None:
        """First line and height of `block`."""
        index = self._position.get(id(block))
        if index is None:
            return None
        return self._starts[index], self._heights[index]

    def lines_of(self, block: Block, look: Look) -> list[Strip]:
        """The lines `block` is drawn as, from the cache when it is up to date."""
        cached = self._cache.get(block)
        if cached is not None and cached[0] == block.version:
            self._cache.move_to_end(block)
            return cached[1]
        return self._draw(block, look)

    def _draw(self, block: Block, look: Look) -> list[Strip]:
        lines = block.render_lines(self.width, look)
        old = self._cache.pop(block, None)
        if old is not None:
            self._cached_lines -= len(old[1])
        self._cache[block] = (block.version, lines)
        self._cached_lines += len(lines)
        # The newest block always stays, however long it is.
        while self._cached_lines > self._max_cached_lines and len(self._cache) > 1:
            evicted, (_, evicted_lines) = self._cache.popitem(last=False)
            self._cached_lines -= len(evicted_lines)
            evicted.drop_cache()
        return lines

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
