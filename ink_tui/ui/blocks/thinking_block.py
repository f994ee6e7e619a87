"""The model's reasoning for one reply: dim plain text above the answer, hideable.

Like the answer, text is buffered by `append` and taken in by `flush`, at most once per
frame. It is plain text, not markdown: reasoning is read at a glance, not formatted.
"""

from __future__ import annotations

from rich.text import Text
from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments


class ThinkingBlock(Block):
    def __init__(self) -> None:
        super().__init__()
        # Appended since the last flush follow the text taken in; a tuple once flushed,
        # which the collector stops tracking (a long session holds one block per reply).
        self._parts: list[str] | tuple[str, ...] = ()
        self._shown = ""

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def plain_text(self) -> str:
        return self._shown

    @property
    def has_pending(self) -> bool:
        return len(self._parts) > 1 or self.text.strip("\n") != self._shown

    def append(self, text: str) -> None:
        if isinstance(self._parts, tuple):
            self._parts = [*self._parts, text]
        else:
            self._parts.append(text)

    def flush(self) -> bool:
        """Take in the buffered text; True if what is shown changed."""
        # One string again, so later joins stay cheap however many deltas came.
        joined = self.text
        self._parts = (joined,)
        shown = joined.strip("\n")
        if shown == self._shown:
            return False
        self._shown = shown
        self.changed()
        return True

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        if not look.show_thinking or not self._shown:
            return []
        style = look.style("thinking")
        inner = inner_width(width, left=2, right=1)
        # Text, not markup: reasoning may contain [brackets] of its own.
        lines = render_segments(Text(self._shown), inner, look, style)
        return [*framed(lines, width, left=2, right=1, style=style), *blank_lines(1, width)]
