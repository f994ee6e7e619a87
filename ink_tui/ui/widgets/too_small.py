"""Shown over everything else when the terminal is too small to be usable.

It covers the screen from a layer of its own (app.tcss); the other widgets stay mounted
and displayed behind it, so the input keeps its focus: what the user types while
resizing goes into the input, and nothing typed or queued is lost.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Static

MIN_WIDTH = 60
MIN_HEIGHT = 16


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


class TooSmall(Static):
    DEFAULT_CSS = """
    TooSmall {
        display: none;
        layer: notice;
        width: 1fr;
        height: 1fr;
        background: $background;
        content-align: center middle;
        text-align: center;
        color: $warning;
        padding: 1 2;
    }
    """

    def show_size(self, width: int, height: int) -> None:
        self.update(
            f"The terminal is {width}×{height}; ink needs at least {MIN_WIDTH}×{MIN_HEIGHT}.\n\n"
            "Make the window larger. Your input and the run are kept meanwhile."
        )


def check_size(main: Screen[object], width: int, height: int) -> None:
    """Show or hide the notice on `main`, the screen that holds it.

    The main screen, even while a picker or help is open over it: the notice is there
    (`app.query_one` would search the open picker and not find it).
    """
    small = too_small(width, height)
    main.set_class(small, "-too-small")
    if small:
        main.query_one(TooSmall).show_size(width, height)
