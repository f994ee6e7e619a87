"""Shown instead of everything else when the terminal is too small to be usable.

The other widgets stay mounted, only hidden, so nothing typed or queued is lost while
the user resizes.
"""

from __future__ import annotations

from textual.widgets import Static

MIN_WIDTH = 60
MIN_HEIGHT = 16


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


class TooSmall(Static):
    DEFAULT_CSS = """
    TooSmall {
        display: none;
        width: 1fr;
        height: 1fr;
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
