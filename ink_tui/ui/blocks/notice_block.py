"""One line for the user: info dim, warnings yellow, errors red with their cause in full."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments

if TYPE_CHECKING:
    from ink_tui.core.events import NoticeLevel

ERROR_BORDER = "▌"


class NoticeBlock(Block):
    def __init__(self, text: str, level: NoticeLevel = "info") -> None:
        super().__init__()
        self.text = text
        self.level = level

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        style = look.style(f"notice-{self.level}")
        # Errors stand out with a bar; the others are indented the same to line up.
        border = None
        if self.level == "error":
            border = Segment(ERROR_BORDER, style + look.style("notice-error-border"))
        inner = inner_width(width, left=1, right=1, border=border is not None)
        # Text, not markup: an error's cause may quote anything, brackets included.
        lines = render_segments(Text(self.text), inner, look, style)
        body = framed(lines, width, left=1, right=1, style=style, border=border)
        return [*body, *blank_lines(1, width)]

    def plain_text(self) -> str:
        return self.text
