"""What the user said: the prompt, a steer or follow-up injected mid-run, or a `!` line;
or what an extension sent, drawn apart (its own colours, its name and kind as the tag)
so it is never read as the user's words."""

from __future__ import annotations

from typing import Literal

from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip

from ink_tui.ui.blocks.block import Block, Look, blank_lines, framed, inner_width, render_segments

UserBlockKind = Literal["prompt", "steer", "follow_up", "shell"]

# Injections are tagged so the reader sees they reached the model mid-run.
_TAGS: dict[str, str] = {"steer": "steer", "follow_up": "follow-up"}
BORDER = "▌"


class UserBlock(Block):
    def __init__(
        self,
        text: str,
        kind: UserBlockKind = "prompt",
        source: str | None = None,
        custom_type: str | None = None,
    ) -> None:
        super().__init__()
        self.text = text
        self.kind = kind
        self.source = source
        if source is not None:
            self.tag = f"⚙ {source}" + (f" · {custom_type}" if custom_type else "")
        else:
            self.tag = _TAGS.get(kind, "")

    def label(self) -> Text:
        label = Text()
        if self.tag:
            label.append(f" {self.tag} ", style="reverse")
            label.append(" ")
        # Text, never markup: the user's words may hold [brackets].
        label.append(self.text)
        return label

    def render_lines(self, width: int, look: Look) -> list[Strip]:
        if self.source is not None:
            style, accent = look.style("extension"), "extension"
        else:
            style = look.style("user")
            accent = (
                "user-shell" if self.kind == "shell" else "user-injected" if self.tag else "user"
            )
        border = Segment(BORDER, style + look.style(f"{accent}-border"))
        inner = inner_width(width, left=1, right=1, border=True)
        lines = render_segments(self.label(), inner, look, style)
        body = framed(lines, width, left=1, right=1, style=style, border=border)
        return [*blank_lines(1, width), *body, *blank_lines(1, width)]

    def plain_text(self) -> str:
        return self.label().plain
