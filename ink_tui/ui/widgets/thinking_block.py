"""The model's reasoning for one reply: dim plain text above the answer, hideable.

Like the answer, text is buffered by `append` and drawn by `flush`, at most once per
frame. It is plain text, not markdown: reasoning is read at a glance, not formatted.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class ThinkingBlock(Static):
    DEFAULT_CSS = """
    ThinkingBlock {
        height: auto;
        padding: 0 1 0 2;
        margin-bottom: 1;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[str] = []
        self._shown = 0

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def plain_text(self) -> str:
        return self.text.strip("\n")

    @property
    def has_pending(self) -> bool:
        return self._shown != len(self._parts)

    def append(self, text: str) -> None:
        self._parts.append(text)

    def flush(self) -> None:
        if not self.is_mounted or not self.has_pending:
            return
        # One string again, so later joins stay cheap however many deltas came.
        joined = self.text
        self._parts = [joined]
        self._shown = 1
        # Text, not markup: reasoning may contain [brackets] of its own.
        self.update(Text(joined.strip("\n")))
