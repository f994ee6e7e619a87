"""What the user said: the prompt, a steer or follow-up injected mid-run, or a `!` line."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.widgets import Static

UserBlockKind = Literal["prompt", "steer", "follow_up", "shell"]

# Injections are tagged so the reader sees they reached the model mid-run.
_TAGS: dict[str, str] = {"steer": "steer", "follow_up": "follow-up"}


class UserBlock(Static):
    DEFAULT_CSS = """
    UserBlock {
        height: auto;
        padding: 0 1;
        margin: 1 0;
        border-left: outer $primary;
        background: $boost;
        text-style: bold;
    }
    UserBlock.-steer, UserBlock.-follow_up {
        border-left: outer $secondary;
    }
    UserBlock.-shell {
        border-left: outer $accent;
    }
    """

    def __init__(self, text: str, kind: UserBlockKind = "prompt") -> None:
        self.text = text
        self.kind = kind
        self.tag = _TAGS.get(kind, "")
        label = Text()
        if self.tag:
            label.append(f" {self.tag} ", style="reverse")
            label.append(" ")
        # Text, never markup: the user's words may hold [brackets].
        label.append(text)
        super().__init__(label, classes=f"-{kind}")
        self._label = label

    def plain_text(self) -> str:
        return self._label.plain
