"""Asking once whether this folder's extensions may run: "Allow" or "Not now".

Extensions are Python files that run with the user's rights, and a cloned repository
could bring some, so the app never loads them without the user's yes. The answer "allow"
is remembered (until a file changes); "not now", Escape or Ctrl+C ask again next start.
The result is True for allow, False otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ink_tui.ui.screens.modal_frame import CenteredModal, ModalFrame

ALLOW = "allow"
NOT_NOW = "not-now"


def explanation(folder: str, files: list[Path]) -> str:
    names = ", ".join(path.name for path in files)
    return (
        f"{folder} holds {len(files)} extension{'s' if len(files) != 1 else ''} ({names}).\n"
        "Extensions are Python code: they run with your rights and can block tools, "
        "add commands and send messages to the model. Allow them only if you trust "
        "this folder. Your answer is kept until one of its files changes."
    )


class TrustExtensions(CenteredModal[bool]):
    DEFAULT_CSS = """
    TrustExtensions #trust-text {
        margin-bottom: 1;
    }
    TrustExtensions #trust-choices {
        height: auto;
        border: none;
        padding: 0;
        background: transparent;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "not_now", "Not now", show=False),
    ]

    def __init__(self, folder: str, files: list[Path]) -> None:
        super().__init__()
        self._folder = folder
        self._files = list(files)

    def compose(self) -> ComposeResult:
        with ModalFrame("Run this folder's extensions?", "↑↓ move · Enter choose · Esc not now"):
            yield Static(explanation(self._folder, self._files), id="trust-text", markup=False)
            yield OptionList(
                Option("Allow: load them now and from now on", id=ALLOW),
                Option("Not now: start without them (ask again next time)", id=NOT_NOW),
                id="trust-choices",
            )

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        # "Not now" first under the cursor: a stray Enter must not run unknown code.
        choices.highlighted = 1
        choices.focus()

    @on(OptionList.OptionSelected, "#trust-choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id == ALLOW)

    def action_not_now(self) -> None:
        self.dismiss(False)
