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

A complete answer keeps only what it shows: its text, its groups and their offsets. The
parser, buffers and kept-lines order of the stream go (or come back only when drawn):
a session of 20,000 messages holds 8,000 answers, and every list or dict left in each is
one more object every full collection walks.
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

from ink_tui.core.text_pieces import Pieces
from ink_tui.ui.blocks.answer_markdown import answer_markdown
from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments
from ink_tui.ui.blocks.markdown_splitter import Block as SplitBlock
from ink_tui.ui.blocks.markdown_splitter import MarkdownSplitter

# Blocks finished in one flush share one render up to about this much source.
GROUP_CHARS = 4096
# The widest prose is drawn (text columns): beyond it, lines are hard to read.
PROSE_MEASURE = 100
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


@dataclass(slots=True, eq=False)
class _Stream:
    """What only an answer still streaming needs; dropped once it is complete."""

    splitter: MarkdownSplitter = field(default_factory=MarkdownSplitter)
    # Appended since the last flush, and what the flushes took in (a piece per flush).
    unflushed: list[str] = field(default_factory=list)
    taken: Pieces = field(default_factory=Pieces)
    # Finished blocks not taken in yet, and seconds a character of markdown takes to
    # draw (see `flush`'s budget).
    waiting: list[SplitBlock] = field(default_factory=list)
    s_per_char: float = 0.0


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
    if inner > PROSE_MEASURE and not _has_wide_content(source):
        # Prose wraps at a readable measure on a very wide terminal; a group with a
        # table or wide code keeps the whole width, which they may need.
        inner = PROSE_MEASURE
    lines = render_segments(answer_markdown(source, look.dark), inner, look)
    # Rich starts a document that opens with a list with an empty line. Rendered whole,
    # an answer has one such start; streamed, each group is a document of its own, and
    # a list would sit two lines below the text above it instead of one.
    while lines and _is_empty(lines[0]):
        del lines[0]
    # The columns beyond a narrowed measure are padding, so each line is `width` wide.
    right = max(PAD_RIGHT, width - PAD_LEFT - inner)
    return framed(lines, width, left=PAD_LEFT, right=right)


def _has_wide_content(source: str) -> bool:
    """A table, or code with a line wider than the measure: they keep the whole width."""
    in_code = False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_code = not in_code
            continue
        wide_code = in_code and len(line) > PROSE_MEASURE - 4
        table = not in_code and stripped.startswith("|") and stripped.endswith("|")
        if wide_code or table:
            return True
    return False


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
        # None once the answer is complete and taken in (see the module doc).
        self._stream: _Stream | None = _Stream()
        # The whole text once complete; None when it reads the same as `plain_text()`
        # (most answers), so it is not held twice.
        self._text: str | None = None
        self._ended = False
        self.groups: list[MarkdownGroup] = []
        self.tail_source = ""
        # How often the tail's source changed (and so was rendered again).
        self.tail_updates = 0
        self._tail_lines: tuple[int, bool, list[Strip]] | None = None
        # Groups whose lines are kept, least recently drawn first, and their line count;
        # None while none is (an answer scrolled away long ago).
        self._kept: OrderedDict[MarkdownGroup, int] | None = None
        self._kept_lines = 0
        # Where each group starts at `_layout_key` (width, dark), and where the last ends:
        # a list while groups come in, then a tuple of ints (which the collector untracks).
        self._layout_key: tuple[int, bool] | None = None
        self._look: Look | None = None
        self._starts: Sequence[int] = ()
        self._end = 0

    @property
    def text(self) -> str:
        """Everything appended so far, flushed or not."""
        stream = self._stream
        if stream is None:
            return self.plain_text() if self._text is None else self._text
        return stream.taken.text() + "".join(stream.unflushed)

    @property
    def ended(self) -> bool:
        return self._ended

    def plain_text(self) -> str:
        """The markdown taken in so far: finished groups, then the tail."""
        return self._joined(self.tail_source)

    def _joined(self, tail: str) -> str:
        sources = [group.source for group in self.groups]
        return "\n\n".join([*sources, tail] if tail else sources)

    def append(self, text: str) -> None:
        """Buffer `text`; nothing is parsed or drawn until `flush`."""
        if self._stream is None:
            # Complete already: kept in `text`, never shown (as a flush would not).
            self._text = self.text + text
            return
        self._stream.unflushed.append(text)

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
        stream = self._stream
        if stream is None:
            return False
        splitter = stream.splitter
        text = "".join(stream.unflushed)
        stream.unflushed.clear()
        if text:
            # One piece per flush, not per delta: a long answer's deltas are tens of
            # thousands of strings the garbage collector would walk on every full pass.
            stream.taken.append(text)
        finished = splitter.feed(text) if text else []
        if self._ended:
            rest = splitter.finish()
            if rest:
                finished.append(SplitBlock(rest))
            budget_s = None
        stream.waiting.extend(finished)
        taken = self._take_waiting(stream, budget_s)
        tail = "" if stream.waiting else splitter.tail
        if self._ended:
            # Complete: nothing more comes in, so the parsing state and pieces can go.
            whole = stream.taken.text()
            self._text = None if whole == self._joined(tail) else whole
            self._stream = None
            self._starts = tuple(self._starts)
        if tail == self.tail_source and not taken:
            return False
        if tail != self.tail_source:
            self.tail_source = tail
            self.tail_updates += 1
            self._tail_lines = None
        self.changed()
        return True

    @property
    def taken_in(self) -> bool:
        """Complete, and every block of it taken in (the flush after `close`)."""
        return self._stream is None

    @property
    def waiting(self) -> bool:
        """Finished blocks are waiting to be taken in by the next `flush`."""
        return self._stream is not None and bool(self._stream.waiting)

    def _take_waiting(self, stream: _Stream, budget_s: float | None) -> bool:
        waiting = stream.waiting
        if not waiting:
            return False
        look = self._look
        if budget_s is None or look is None or self._layout_key is None or not stream.s_per_char:
            self.groups.extend(group_blocks(waiting))
            waiting.clear()
            return True
        count, size = 1, len(waiting[0].text)
        while (
            count < len(waiting)
            and (size + len(waiting[count].text)) * (stream.s_per_char) <= budget_s
        ):
            size += len(waiting[count].text)
            count += 1
        groups = group_blocks(waiting[:count])
        del waiting[:count]
        width = self._layout_key[0]
        for group in groups:
            _draw_timed(stream, group, width, look)
        self.groups.extend(groups)
        return True

    def render_lines(self, width: int, look: Look) -> AnswerLines:
        return AnswerLines(self, width, look, self._render_tail(width, look))

    def _layout(self, width: int, look: Look) -> tuple[Sequence[int], int]:
        """Where each group starts at `width`, and where the last one ends.

        Summed once per group and width: drawing a frame of a long answer must not cost
        a call per group. Groups measured for the first time are drawn, so kept.
        """
        key = (width, look.dark)
        self._look = look
        if key != self._layout_key:
            # A new sequence: lines built for the old width keep theirs.
            self._layout_key, self._starts, self._end = key, (), 0
        if len(self._starts) == len(self.groups):
            return self._starts, self._end
        starts = self._starts if isinstance(self._starts, list) else list(self._starts)
        end = self._end
        stream = self._stream
        for group in self.groups[len(starts) :]:
            if stream is not None:
                _draw_timed(stream, group, width, look)
            starts.append(end)
            end += group.height(width, look)
            self.keep(group)
        self._end = end
        self._starts = starts if stream is not None else tuple(starts)
        return self._starts, end

    @property
    def kept_lines(self) -> int:
        return self._kept_lines

    def keep(self, group: MarkdownGroup) -> None:
        """`group` was just drawn: keep its lines, dropping the least recently drawn."""
        kept = self._kept
        if kept is not None and group in kept:
            kept.move_to_end(group)
            return
        if not group.drawn:
            return
        if kept is None:
            kept = self._kept = OrderedDict()
        count = group._height
        kept[group] = count
        self._kept_lines += count
        while self._kept_lines > KEPT_LINES and len(kept) > 1:
            old, old_count = kept.popitem(last=False)
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
        self._kept = None
        self._kept_lines = 0
        self._tail_lines = None
        # Heights stay known (groups keep them), so the offsets stay true.


def _draw_timed(stream: _Stream, group: MarkdownGroup, width: int, look: Look) -> None:
    """Draw `group`, learning from it how long markdown takes per character."""
    if group.measured(width, look):
        return
    started = time.perf_counter()
    group.lines(width, look)
    spent = (time.perf_counter() - started) / max(1, len(group.source))
    # Smoothed: one slow draw (a collection, the machine busy) moves it a quarter.
    learnt = stream.s_per_char
    stream.s_per_char = spent if not learnt else 0.75 * learnt + 0.25 * spent
