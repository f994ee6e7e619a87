"""The marker row where the conversation was compacted; it unfolds to the summary.

Folded: `⇊ Context compacted: 41.2k → 6.1k tokens (auto, at 80 %)  ▸ summary`. A click,
or Enter with the transcript's cursor on it, shows the summary the model wrote under
it, exactly as the model will read it. Everything above the marker stays on screen and
in the session file; the model sees only the summary and what follows.

Folding works as a tool call's does (`foldable`, `expanded`, `toggle_fold`), so the
transcript's cursor, clicks and Ctrl+O treat both alike.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments

BODY_INDENT = 2

_REASONS = {
    "threshold": "automatically",
    "manual": "with /compact",
    "overflow": "after the server said it was too long",
}


def format_tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


class CompactionBlock(Block):
    def __init__(
        self, summary: str, tokens_before: int = 0, tokens_after: int = 0, reason: str = ""
    ) -> None:
        super().__init__()
        self.summary = summary.strip()
        self.tokens_before = tokens_before
        self.tokens_after = tokens_after
        self.reason = reason
        self.expanded = False

    @property
    def foldable(self) -> bool:
        return bool(self.summary)

    @property
    def collapsed(self) -> bool:
        return self.foldable and not self.expanded

    def set_expanded(self, expanded: bool) -> None:
        if self.foldable and expanded != self.expanded:
            self.expanded = expanded
            self.changed()

    def toggle_fold(self) -> None:
        self.set_expanded(not self.expanded)

    def header_text(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("⇊ ", style="bold magenta")
        text.append("Context compacted", style="bold")
        if self.tokens_before:
            sizes = f"{format_tokens(self.tokens_before)} → {format_tokens(self.tokens_after)}"
            text.append(f": {sizes} tokens", style="")
        how = _REASONS.get(self.reason)
        if how:
            text.append(f" ({how})", style="dim")
        text.append("  ▾ summary" if self.expanded else "  ▸ summary", style="dim italic")
        return text

    def plain_text(self) -> str:
        header = self.header_text().plain
        return f"{header}\n{self.summary}" if self.expanded else header

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        base = look.style("tool-cursor") if self.highlighted else Style()
        inner = inner_width(width, left=1, right=1)
        lines: list[Iterable[Segment]] = [*render_segments(self.header_text(), inner, look, base)]
        if self.expanded:
            body_style = base + look.style("tool-body")
            # Text, not markup: a summary may hold [brackets] of its own.
            body = render_segments(Text(self.summary), inner - BODY_INDENT, look, body_style)
            lines.extend(framed(body, inner, left=BODY_INDENT, style=base))
        return [*framed(lines, width, left=1, right=1, style=base), *blank_lines(1, width)]
