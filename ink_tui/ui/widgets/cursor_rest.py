"""The input's cursor stops blinking once the user has left it alone for a while.

A blinking cursor draws a frame twice a second for as long as the app is open: at idle
that was most of what `ink` cost the machine (figure 10's idle CPU in
benchmarks/README.md). As GTK's `gtk-cursor-blink-timeout` does, the cursor blinks for
`REST_AFTER_S` after the last key, click, paste or focus, then stays shown, steady,
until the next one.
"""

from __future__ import annotations

from textual.timer import Timer
from textual.widgets import TextArea

REST_AFTER_S = 10.0


class CursorRest:
    """Turns `editor.cursor_blink` off after a rest and on at the next wake; a blink
    turned off by anyone else (a setting, a test's pictures) stays off."""

    def __init__(self, editor: TextArea, rest_after: float = REST_AFTER_S) -> None:
        self._editor = editor
        self.rest_after = rest_after
        self._timer: Timer | None = None
        self._resting = False
        self.wake()

    def wake(self) -> None:
        """The user did something: blink again, and rest `rest_after` from now."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        editor = self._editor
        if not editor.cursor_blink and not self._resting:
            return  # off by someone else's choice
        self._resting = False
        editor.cursor_blink = True
        self._timer = editor.set_timer(self.rest_after, self._rest)

    def _rest(self) -> None:
        self._timer = None
        if self._editor.cursor_blink:
            self._resting = True
            self._editor.cursor_blink = False
