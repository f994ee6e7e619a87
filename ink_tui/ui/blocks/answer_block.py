"""One streamed answer, rendered as markdown without re-rendering what is finished.

Text is buffered by `append` and taken in by `flush`, which the transcript calls at most
once per frame. The splitter hands back the top-level blocks that can no longer change;
the blocks finished in one flush become one `MarkdownGroup`, rendered once per width and
kept as lines, and only the open tail is re-rendered. Grouping per flush keeps the count
of renders down when text comes in bursts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.strip import Strip

from ink_tui.ui.blocks.answer_markdown import answer_markdown
from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_strips
from ink_tui.ui.blocks.markdown_splitter import Block as SplitBlock
from ink_tui.ui.blocks.markdown_splitter import MarkdownSplitter

# Blocks finished in one flush share one render up to about this much source.
GROUP_CHARS = 4096
PAD_LEFT = 2
PAD_RIGHT = 1


@dataclass(slots=True)
class MarkdownGroup:
    """Finished markdown: its source never changes, its lines are kept per width."""

    source: str
    continued: bool = False
    # Counts renders; tests use it to prove a group is not rendered again while later
    # text streams in.
    renders: int = 0
    _lines: dict[tuple[int, bool], list[Strip]] = field(default_factory=dict)

    def lines(self, width: int, look: Look) -> list[Strip]:
        key = (width, look.dark)
        lines = self._lines.get(key)
        if lines is None:
            self.renders += 1
            lines = _markdown_lines(self.source, width, look)
            if not self.continued:
                lines.extend(blank_lines(1, width))
            # Only the current width is worth keeping.
            self._lines = {key: lines}
        return lines


def _markdown_lines(source: str, width: int, look: Look) -> list[Strip]:
    inner = inner_width(width, left=PAD_LEFT, right=PAD_RIGHT)
    lines = render_strips(answer_markdown(source, look.dark), inner, look)
    return framed(lines, width, left=PAD_LEFT, right=PAD_RIGHT)


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
        self._splitter = MarkdownSplitter()
        self._unflushed: list[str] = []
        self._parts: list[str] = []
        self._ended = False
        self.groups: list[MarkdownGroup] = []
        self.tail_source = ""
        # How often the tail's source changed (and so was rendered again).
        self.tail_updates = 0
        self._tail_lines: tuple[int, bool, list[Strip]] | None = None

    @property
    def text(self) -> str:
        """Everything appended so far, flushed or not."""
        return "".join(self._parts)

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
        self._parts.append(text)

    def close(self) -> None:
        """The reply is complete: its last block becomes a finished one at the next flush."""
        self._ended = True

    def flush(self) -> bool:
        """Take in the buffered text; True if what is shown changed."""
        text = "".join(self._unflushed)
        self._unflushed.clear()
        finished = self._splitter.feed(text) if text else []
        if self._ended:
            rest = self._splitter.finish()
            if rest:
                finished.append(SplitBlock(rest))
        if finished:
            self.groups.extend(group_blocks(finished))
        tail = self._splitter.tail
        if tail == self.tail_source and not finished:
            return False
        if tail != self.tail_source:
            self.tail_source = tail
            self.tail_updates += 1
            self._tail_lines = None
        self.changed()
        return True

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        lines: list[Strip] = []
        for group in self.groups:
            lines.extend(group.lines(width, look))
        lines.extend(self._render_tail(width, look))
        return lines

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
            group._lines = {}
        self._tail_lines = None
