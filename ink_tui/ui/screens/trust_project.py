"""Asking, before the session starts, whether this folder's `.ink/config.toml` is trusted.

A cloned repository's config file could loosen the approval policy, allow bash, pass
API keys to commands or send the conversation to its own server; until the user trusts
the file those keys are held back (`session/project_trust.py`). The question lists them.

The answer must be deliberate: nothing is focused at first, so typed text (letters,
Enter, a paste) answers nothing. Ctrl+G (fixed: the file's own `[keys]` cannot move it)
focuses the choices, "Not now" under the cursor; a click on a choice answers too.
Escape means "not now". The result is True for trust, False otherwise.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ink_tui.session.config_files import display_path
from ink_tui.session.project_trust import HeldBack
from ink_tui.ui.screens.modal_frame import CenteredModal, ModalFrame

TRUST = "trust"
NOT_NOW = "not-now"
ANSWER_KEY = "ctrl+g"


def explanation(held: HeldBack) -> str:
    why = "is new here" if held.state == "new" else "changed since you trusted it"
    sets = "\n".join(f"  {key}" for key in held.keys)
    return (
        f"{display_path(held.path)} {why}. It sets:\n{sets}\n"
        "These loosen approvals, hand API keys to commands or send your conversation "
        "elsewhere, so they are not applied unless you trust the file. The rest of it "
        "applies either way. Your answer is kept until the file changes."
    )


class TrustProject(CenteredModal[bool]):
    DEFAULT_CSS = """
    TrustProject #trust-project-text {
        margin-bottom: 1;
    }
    TrustProject #trust-project-choices {
        height: auto;
        border: none;
        padding: 0;
        background: transparent;
    }
    """
    # Nothing focused at first: typed text must not reach the choices.
    AUTO_FOCUS = None

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "not_now", "Not now", show=False),
        Binding(ANSWER_KEY, "focus_choices", "Answer", show=False, priority=True),
    ]

    def __init__(self, held: HeldBack) -> None:
        super().__init__()
        self._held = held

    def compose(self) -> ComposeResult:
        hints = "Ctrl+G to answer, or click a choice · Esc not now"
        with ModalFrame("Trust this folder's config?", hints):
            yield Static(explanation(self._held), id="trust-project-text", markup=False)
            yield OptionList(
                Option("Trust: apply it now and from now on", id=TRUST),
                Option("Not now: start without those keys (ask again next time)", id=NOT_NOW),
                id="trust-project-choices",
            )

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        # "Not now" under the cursor: a stray Enter after Ctrl+G must not trust it.
        choices.highlighted = 1
        # Not focusable until Ctrl+G: typed keys reach nothing (a click still chooses).
        choices.can_focus = False
        self.set_focus(None)

    def action_focus_choices(self) -> None:
        choices = self.query_one(OptionList)
        choices.can_focus = True
        choices.focus()

    @on(OptionList.OptionSelected, "#trust-project-choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id == TRUST)

    def action_not_now(self) -> None:
        self.dismiss(False)


class TrustProjectApp(App[bool]):
    """The question on its own, before the session's app starts."""

    TITLE = "ink"

    def __init__(self, held: HeldBack) -> None:
        super().__init__()
        self._held = held

    def on_mount(self) -> None:
        self.push_screen(TrustProject(self._held), self._answered)

    def _answered(self, trusted: bool | None) -> None:
        self.exit(bool(trusted))


def ask_trust_project(held: HeldBack) -> bool:
    """Show the question; True when the user trusts the file."""
    return bool(TrustProjectApp(held).run())
