"""One streamed answer, rendered as markdown without re-rendering what is finished.

Text is buffered by `append` and taken in by `flush`, which the transcript calls at most
once per frame. The splitter hands back the top-level blocks that can no longer change;
the blocks finished in one flush become one `MarkdownGroup`, rendered once per width,
and only the open tail is re-rendered. Grouping per flush keeps the count of renders
down when text comes in bursts. A fast model sends more per frame than a frame should
spend drawing (32 KB/s is some 1.5 KB a frame, 5-20 ms of markdown and highlighting on
2 cores, and a key press waits behind it): given a time budget, `flush` draws finished
blocks one at a time until the budget is spent and leaves the rest for the next frame.

A long answer (a model writing a whole file) is thousands of lines, and every drawn line
is a few dozen objects the garbage collector walks on each full pass: a 200 KB answer
made those pauses grow past 100 ms while it streamed. So a group keeps its height for
good but its lines only while among the answer's `KEPT_LINES` most recently drawn;
`AnswerLines` hands the transcript the whole answer as a sequence that draws a group
again when a line of it is asked for.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import overload

from rich.segment import Segment
from textual.strip import Strip

from ink_tui.ui.blocks.answer_markdown import answer_markdown
from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments
from ink_tui.ui.blocks.markdown_splitter import Block as SplitBlock
from ink_tui.ui.blocks.markdown_splitter import MarkdownSplitter

# Blocks finished in one flush share one render up to about this much source.
GROUP_CHARS = 4096
PAD_LEFT = 2
PAD_RIGHT = 1
# Lines of finished groups an answer keeps drawn: two screens of a tall terminal. Each
# drawn line is some forty objects once on screen (the transcript's offset and styled
# copies hang off it), all walked by every full collection: with 400 lines the heap
# those pauses walk was 26,000 objects while a 32 KB/s answer streamed, with 200 it is
# 19,000. Fewer lines than a screen would draw groups again on every frame.
KEPT_LINES = 200


@dataclass(slots=True, eq=False)
class MarkdownGroup:
    """Finished markdown: its source never changes; its height is kept, its lines may go."""

    source: str
    continued: bool = False
    # Counts renders; tests use it to prove a group is not rendered again while later
    # text streams in.
    renders: int = 0
    _key: tuple[int, bool] | None = None
    _height: int = 0
    _lines: list[Strip] | None = field(default=None, repr=False)

    def measured(self, width: int, look: Look) -> bool:
        return self._key == (width, look.dark)

    def height(self, width: int, look: Look) -> int:
        if not self.measured(width, look):
            self.lines(width, look)
        return self._height

    def lines(self, width: int, look: Look) -> list[Strip]:
        key = (width, look.dark)
        lines = self._lines
        if lines is None or self._key != key:
            self.renders += 1
            lines = _markdown_lines(self.source, width, look)
            if not self.continued:
                lines.extend(blank_lines(1, width))
            self._key, self._height, self._lines = key, len(lines), lines
        return lines

    @property
    def drawn(self) -> bool:
        return self._lines is not None

    def drop(self) -> None:
        self._lines = None


class AnswerLines(Sequence[Strip]):
    """An answer's lines at one width: finished groups drawn on demand, then the tail.

    Built on every frame of a stream, so it costs the same however many groups there
    are: the group offsets come from the answer, summed once per group (`_layout`).
    """

    def __init__(self, answer: AnswerBlock, width: int, look: Look, tail: list[Strip]) -> None:
        self._answer = answer
        self._width = width
        self._look = look
        # The answer only ever appends groups (and replaces `starts` when the width
        # changes), so these stay true for this frame's view without a copy.
        self._groups = answer.groups
        self._starts, total = answer._layout(width, look)
        self._count = len(self._starts)
        self._tail_start = total
        self._tail = tail
        self._length = total + len(tail)

    def __len__(self) -> int:
        return self._length

    @property
    def weight(self) -> int:
        """Lines actually held in memory: what the transcript's cache counts."""
        return self._answer.kept_lines + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> Strip: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Strip]: ...
    def __getitem__(self, index: int | slice) -> Strip | Sequence[Strip]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        if index >= self._tail_start:
            return self._tail[index - self._tail_start]
        position = bisect_right(self._starts, index, hi=self._count) - 1
        group = self._groups[position]
        lines = group.lines(self._width, self._look)
        self._answer.keep(group)
        return lines[index - self._starts[position]]


def _markdown_lines(source: str, width: int, look: Look) -> list[Strip]:
    inner = inner_width(width, left=PAD_LEFT, right=PAD_RIGHT)
    lines = render_segments(answer_markdown(source, look.dark), inner, look)
    # Rich starts a document that opens with a list with an empty line. Rendered whole,
    # an answer has one such start; streamed, each group is a document of its own, and
    # a list would sit two lines below the text above it instead of one.
    while lines and _is_empty(lines[0]):
        del lines[0]
    return framed(lines, width, left=PAD_LEFT, right=PAD_RIGHT)


def _is_empty(line: list[Segment]) -> bool:
    # Blank code lines have the code's background: those are content, not spacing.
    return all(
        not segment.text.strip() and (segment.style is None or segment.style.bgcolor is None)
        for segment in line
    )


def group_blocks(blocks: list[SplitBlock]) -> list[MarkdownGroup]:
    """Join blocks into groups of about `GROUP_CHARS`; a continued code piece ends one."""
    groups: list[MarkdownGroup] = []
    texts: list[str] = []
    size = 0
    for block in blocks:
        texts.append(block.text)
        size += len(block.text)
        if block.continued or size >= GROUP_CHARS:
            groups.append(MarkdownGroup("\n\n".join(texts), block.continued))
            texts, size = [], 0
    if texts:
        groups.append(MarkdownGroup("\n\n".join(texts)))
    return groups


class AnswerBlock(Block):
    """The assistant's reply text: finished groups above one live tail."""

    def __init__(self) -> None:
        super().__init__()
        # None once the answer is complete and taken in: a long session holds thousands.
        self._splitter: MarkdownSplitter | None = MarkdownSplitter()
        self._unflushed: list[str] = []
        self._parts: list[str] = []
        self._ended = False
        self.groups: list[MarkdownGroup] = []
        self.tail_source = ""
        # How often the tail's source changed (and so was rendered again).
        self.tail_updates = 0
        self._tail_lines: tuple[int, bool, list[Strip]] | None = None
        # Groups whose lines are kept, least recently drawn first, and their line count.
        self._kept: OrderedDict[MarkdownGroup, int] = OrderedDict()
        self._kept_lines = 0
        # Where each group starts at `_layout_key` (width, dark), and where the last ends.
        self._layout_key: tuple[int, bool] | None = None
        self._look: Look | None = None
        self._starts: list[int] = []
        self._end = 0
        # Finished blocks not taken in yet, and seconds a character of markdown takes to
        # draw (see `flush`'s budget).
        self._waiting: list[SplitBlock] = []
        self._s_per_char = 0.0

    @property
    def text(self) -> str:
        """Everything appended so far, flushed or not."""
        return "".join([*self._parts, *self._unflushed])

    @property
    def ended(self) -> bool:
        return self._ended

    def plain_text(self) -> str:
        """The markdown taken in so far: finished groups, then the tail."""
        sources = [group.source for group in self.groups]
        return "\n\n".join([*sources, self.tail_source] if self.tail_source else sources)

    def append(self, text: str) -> None:
        """Buffer `text`; nothing is parsed or drawn until `flush`."""
        self._unflushed.append(text)

    def close(self) -> None:
        """The reply is complete: its last block becomes a finished one at the next flush."""
        self._ended = True

    def flush(self, budget_s: float | None = None) -> bool:
        """Take in the buffered text; True if what is shown changed.

        With `budget_s`, only as many finished blocks are taken in as the time it took
        to draw markdown so far says can be drawn within it (at least one), and they are
        drawn here; the rest wait for the next flush (`waiting`) and the tail is not
        shown meanwhile, so a frame never costs much more than the budget however much
        text came in. The screen runs a frame or two behind the stream while that lasts,
        and never goes backwards: the blocks taken first hold what the tail showed. A
        complete answer is taken in whole.
        """
        splitter = self._splitter
        if splitter is None:
            return False
        text = "".join(self._unflushed)
        self._unflushed.clear()
        if text:
            # One piece per flush, not per delta: a long answer's deltas are tens of
            # thousands of strings the garbage collector would walk on every full pass.
            self._parts.append(text)
        finished = splitter.feed(text) if text else []
        if self._ended:
            rest = splitter.finish()
            if rest:
                finished.append(SplitBlock(rest))
            # Complete: nothing more comes in, so the parsing state and pieces can go.
            self._splitter = None
            self._parts = [self.text]
            budget_s = None
        self._waiting.extend(finished)
        taken = self._take_waiting(budget_s)
        tail = "" if self._waiting else splitter.tail
        if tail == self.tail_source and not taken:
            return False
        if tail != self.tail_source:
            self.tail_source = tail
            self.tail_updates += 1
            self._tail_lines = None
        self.changed()
        return True

    @property
    def waiting(self) -> bool:
        """Finished blocks are waiting to be taken in by the next `flush`."""
        return bool(self._waiting)

    def _take_waiting(self, budget_s: float | None) -> bool:
        waiting = self._waiting
        if not waiting:
            return False
        look = self._look
        if budget_s is None or look is None or self._layout_key is None or not self._s_per_char:
            self.groups.extend(group_blocks(waiting))
            waiting.clear()
            return True
        count, size = 1, len(waiting[0].text)
        while (
            count < len(waiting)
            and (size + len(waiting[count].text)) * (self._s_per_char) <= budget_s
        ):
            size += len(waiting[count].text)
            count += 1
        groups = group_blocks(waiting[:count])
        del waiting[:count]
        width = self._layout_key[0]
        for group in groups:
            self._draw_timed(group, width, look)
        self.groups.extend(groups)
        return True

    def _draw_timed(self, group: MarkdownGroup, width: int, look: Look) -> None:
        """Draw `group`, learning from it how long markdown takes per character."""
        if group.measured(width, look):
            return
        started = time.perf_counter()
        group.lines(width, look)
        spent = (time.perf_counter() - started) / max(1, len(group.source))
        # Smoothed: one slow draw (a collection, the machine busy) moves it a quarter.
        self._s_per_char = spent if not self._s_per_char else 0.75 * self._s_per_char + 0.25 * spent

    def render_lines(self, width: int, look: Look) -> AnswerLines:
        return AnswerLines(self, width, look, self._render_tail(width, look))

    def _layout(self, width: int, look: Look) -> tuple[list[int], int]:
        """Where each group starts at `width`, and where the last one ends.

        Summed once per group and width: drawing a frame of a long answer must not cost
        a call per group. Groups measured for the first time are drawn, so kept.
        """
        key = (width, look.dark)
        self._look = look
        if key != self._layout_key:
            # A new list: lines built for the old width keep theirs.
            self._layout_key, self._starts, self._end = key, [], 0
        starts, end = self._starts, self._end
        for group in self.groups[len(starts) :]:
            self._draw_timed(group, width, look)
            starts.append(end)
            end += group.height(width, look)
            self.keep(group)
        self._end = end
        return starts, end

    @property
    def kept_lines(self) -> int:
        return self._kept_lines

    def keep(self, group: MarkdownGroup) -> None:
        """`group` was just drawn: keep its lines, dropping the least recently drawn."""
        if group in self._kept:
            self._kept.move_to_end(group)
            return
        if not group.drawn:
            return
        count = group._height
        self._kept[group] = count
        self._kept_lines += count
        while self._kept_lines > KEPT_LINES and len(self._kept) > 1:
            old, old_count = self._kept.popitem(last=False)
            self._kept_lines -= old_count
            old.drop()

    def _render_tail(self, width: int, look: Look) -> list[Strip]:
        if not self.tail_source.strip():
            return []
        cached = self._tail_lines
        if cached is not None and cached[:2] == (width, look.dark):
            return cached[2]
        lines = [*_markdown_lines(self.tail_source, width, look), *blank_lines(1, width)]
        self._tail_lines = (width, look.dark, lines)
        return lines

    def drop_cache(self) -> None:
        for group in self.groups:
            group.drop()
        self._kept.clear()
        self._kept_lines = 0
        self._tail_lines = None
        # Heights stay known (groups keep them), so the offsets stay true.
