"""Applies the compact-layout policy (`compact_layout.plan_layout`) to the app's panels.

The App asks for a new plan when the terminal is resized, when a bus event may change
what the panels show, and when the input changes; the plan is made once the widgets
have drawn that change (`call_after_refresh`), from the rows each panel would take in
full, so a compact panel never makes the next plan think there is room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ink_tui.ui.compact_layout import Showing, plan_layout

if TYPE_CHECKING:
    from textual.app import App

# Bus events after which a panel may take more or fewer rows.
LAYOUT_EVENTS = frozenset(
    {
        "run_start",
        "run_end",
        "tool_start",
        "tool_end",
        "tool_settled",
        "approval_request",
        "approval_resolved",
        "queue_update",
        "state",
    }
)
# The input's rows are measured; the hint row and the status bar take one each.
BOTTOM_ROWS = 2
# Rows the welcome takes in full; below that much room it draws its compact form.
WELCOME_FULL_ROWS = 14


class Compactable(Protocol):
    @property
    def full_rows(self) -> int:
        """Rows the widget takes in its full form now (0: not showing)."""
        ...

    def set_compact(self, compact: bool) -> None: ...


class PanelLayout:
    def __init__(self, app: App[None]) -> None:
        self.app = app
        self.activity: Compactable | None = None
        self.queue: Compactable | None = None
        self.question: Compactable | None = None
        self.welcome: Compactable | None = None
        self._pending = False

    def schedule(self) -> None:
        if not self._pending:
            self._pending = True
            self.app.call_after_refresh(self.apply)

    def apply(self) -> None:
        self._pending = False
        from ink_tui.ui.widgets.prompt_input import PromptInput

        screens = self.app.screen_stack
        if not screens or not screens[0].is_attached:
            return
        prompts = screens[0].query(PromptInput)
        fixed = BOTTOM_ROWS + (prompts.first().outer_size.height if prompts else 3)
        height = self.app.size.height
        if self.welcome is not None:
            self.welcome.set_compact(height - fixed < WELCOME_FULL_ROWS)
        showing = Showing(
            activity=self.activity.full_rows if self.activity else 0,
            queue=self.queue.full_rows if self.queue else 0,
            question=self.question.full_rows if self.question else 0,
            fixed=fixed,
        )
        layout = plan_layout(height, showing)
        if self.activity is not None:
            self.activity.set_compact(layout.activity == "compact")
        if self.queue is not None:
            self.queue.set_compact(layout.queue == "compact")
        if self.question is not None:
            self.question.set_compact(layout.question == "compact")
