"""What Ctrl+C does, in order of precedence.

1. A picker or help is open: it closes, as Escape would.
2. A run is going on: it is interrupted ("press Ctrl+C again to quit now"). The stop key
   is never taken over by anything else while a run goes on.
3. A second press within `DOUBLE_PRESS_S` of the one that aborted a run quits with
   status 130, even if the run settled in between; the hint row says so for as long as
   that holds (`settled`).
4. Idle with text selected in the transcript: the selection is copied, as /copy copies
   (`ui/clipboard.py`), and the hint row says how.
5. Idle with text in the input: the input is cleared, and the text is kept one key away:
   it becomes the newest history entry, and the hint row says "Cleared; press Up to
   bring it back" until the input holds text again (brought back, or typed) or
   `CLEARED_HINT_S` pass. Clearing arms no quitting, so the next press cannot quit.
6. Idle with nothing to clear: a first press arms quitting ("Press Ctrl+C again to
   quit"), a second one within `QUIT_WINDOW_S` quits. Submitting anything disarms it
   (`disarm`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import ModalScreen

from ink_tui.ui import clock
from ink_tui.ui.widgets.hint_row import HintRow

if TYPE_CHECKING:
    from ink_tui.ui.app_host import AppHost

QUIT_WINDOW_S = 2.0
# A second Ctrl+C this soon after the one that aborted a run still means "quit now", even
# if the run settled in between (an aborted stream settles in milliseconds): it must not
# clear the input the settle just restored.
DOUBLE_PRESS_S = 0.5
# What the hint row says after Ctrl+C cleared the input, and for how long.
CLEARED_HINT = "Cleared; press Up to bring it back"
CLEARED_HINT_S = 5.0
QUIT_HINT = "Press Ctrl+C again to quit"
# How long the hint row says what a copy of the selection did (it may name tmux's fix).
COPY_HINT_S = 4.0


class CtrlCPolicy:
    def __init__(self, app: AppHost) -> None:
        self.app = app
        self._last_idle: float | None = None
        self._last_abort: float | None = None

    def disarm(self) -> None:
        """Something was submitted: an earlier idle press no longer counts toward quitting."""
        self._last_idle = None

    def settled(self) -> None:
        """The run went idle. If a press aborted it a moment ago, a second press still
        quits (rule 3): the hint row says so until that window closes, since the state
        change took the "Interrupting…" hint away."""
        if self._last_abort is None:
            return
        left = self._last_abort + DOUBLE_PRESS_S - clock.now()
        if left > 0:
            self.app.query_one(HintRow).flash(f"{QUIT_HINT} now", left)

    def press(self) -> None:
        app = self.app
        if isinstance(app.screen, ModalScreen):
            app.screen.dismiss(None)
            return
        outcome = app.controller.interrupt() if app.controller is not None else "idle"
        now = clock.now()
        if outcome == "aborting":
            self._last_abort = now
            app.query_one(HintRow).flash("Interrupting… press Ctrl+C again to quit now", 3.0)
            return
        if outcome == "exit":
            return
        aborted_at, self._last_abort = self._last_abort, None
        if aborted_at is not None and now - aborted_at <= DOUBLE_PRESS_S:
            # Loaded already: a run was aborted a moment ago.
            from ink_tui.control.controller import EXIT_INTERRUPTED

            app.quit_app(EXIT_INTERRUPTED)
            return
        selected = app.screen.get_selected_text()
        if selected:
            from ink_tui.ui.clipboard import copy_flash, copy_text

            # As /copy: a clipboard tool when there is one, else OSC 52, which nothing
            # confirms (under tmux's default it goes nowhere), so it is never "copied".
            copied = copy_text(selected, app.copy_to_clipboard)
            app.screen.clear_selection()
            message = copy_flash(f"{len(selected)} characters", copied)
            app.query_one(HintRow).flash(message, COPY_HINT_S)
            return
        text = app.prompt.text
        if app.prompt.clear_input():
            # The input keeps it as its newest history entry (a blank text is not kept,
            # and nothing of it is lost either).
            self._last_idle = None
            app.query_one(HintRow).flash_until_typed(
                CLEARED_HINT if text.strip() else "Cleared", CLEARED_HINT_S
            )
            return
        if self._last_idle is not None and now - self._last_idle <= QUIT_WINDOW_S:
            app.quit_app(0)
            return
        self._last_idle = now
        app.query_one(HintRow).flash(QUIT_HINT, QUIT_WINDOW_S)
