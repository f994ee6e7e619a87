"""The app's first screen: Textual's default one, but for its focus and its frames."""

from __future__ import annotations

from textual.screen import Screen

from ink_tui.fastpaths import adopt_screen


class MainScreen(Screen[object]):
    """The app's first screen, as Textual's default one but for its focus.

    The input has the focus from the first frame on. Left to the app's "*", the
    transcript (first in order) took it, then `on_mount` moved it to the input: two
    restylings of both, and of the input's dozen component classes, before the first
    frame. Only this screen: pushed ones keep the app's "*". Its compositor renders
    partial frames row by row (`adopt_screen`, the fast paths).
    """

    AUTO_FOCUS = "#prompt"

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        adopt_screen(self)
