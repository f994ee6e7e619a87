"""What every modal of the app looks like: a centred, bordered box on a dimmed screen.

The title and the key hints sit in the box's border, so scrolling or filtering inside it
never hides them.
"""

from __future__ import annotations

from typing import TypeVar

from textual.containers import Vertical
from textual.screen import ModalScreen

ResultT = TypeVar("ResultT")


class CenteredModal(ModalScreen[ResultT]):
    DEFAULT_CSS = """
    CenteredModal {
        align: center middle;
    }
    """


class ModalFrame(Vertical):
    DEFAULT_CSS = """
    ModalFrame {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 90%;
        border: round $primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, title: str, hints: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = title
        self.border_subtitle = hints
