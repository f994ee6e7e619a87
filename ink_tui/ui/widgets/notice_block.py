"""One line for the user: info dim, warnings yellow, errors red with their cause in full."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ink_tui.core.events import NoticeLevel


class NoticeBlock(Static):
    DEFAULT_CSS = """
    NoticeBlock {
        height: auto;
        padding: 0 1;
        margin-bottom: 1;
    }
    NoticeBlock.-info {
        color: $text-muted;
    }
    NoticeBlock.-warning {
        color: $text-warning;
    }
    NoticeBlock.-error {
        color: $text-error;
        border-left: thick $error;
        background: $error 10%;
    }
    """

    def __init__(self, text: str, level: NoticeLevel = "info") -> None:
        # Text, not markup: an error's cause may quote anything, brackets included.
        super().__init__(Text(text), classes=f"-{level}")
        self.text = text
        self.level = level

    def plain_text(self) -> str:
        return self.text
