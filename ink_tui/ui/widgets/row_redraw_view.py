"""A scrolling view that draws again only the rows unlike the last frame's.

The transcript's frame says which lines its rows show (`redraw`); this base compares
them with the last frame's (`RowRepaint`, `transcript_repaint.py`) and refreshes only
the rows that differ, each from its first differing cell. A scroll by whole rows is
left to the terminal where it can do it (`ink_tui.fastpaths.terminal_scroll`): the
rows that come in are drawn edge to edge, and the scrollbar again. Anything that draws
the whole view by other means (`refresh()` with no region, a scroll by the user) makes
the next frame compare with nothing.

Who moves `scroll_y` is kept in `_scroll_owner`: the user or Textual (""), the frame
drawing every row itself ("frame") or the terminal ("terminal").
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal, Self

from textual.geometry import Region
from textual.scroll_view import ScrollView

from ink_tui.fastpaths import adopt_scrollbar, enabled
from ink_tui.ui.widgets.transcript_repaint import Row, RowRepaint


class RowRedrawView(ScrollView):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        # Before Textual's own set-up, which refreshes (see `refresh`).
        self._repaint = RowRepaint()
        self._scroll_owner: Literal["", "frame", "terminal"] = ""
        super().__init__(id=id, classes=classes)

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> Self:
        if repaint and not regions:
            self._repaint.forget()  # drawn whole by other means: compare with nothing
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        if self._scroll_owner == "terminal":
            # The rows on screen are moved by the terminal: no repaint of them all.
            if self.show_vertical_scrollbar:
                self.vertical_scrollbar.position = new_value
        else:
            super().watch_scroll_y(old_value, new_value)
            if not self._scroll_owner:
                self._repaint.forget()

    def redraw(self, top: int, rows: Sequence[Row], frame: Hashable | None) -> None:
        """Show `rows` (the lines from `top` on), drawing only those unlike the last
        frame's; `frame` is everything else a row's drawing depends on (None: unsure)."""
        if self.show_vertical_scrollbar:
            adopt_scrollbar(self.vertical_scrollbar)
        plan = self._repaint.plan(top, rows, frame)
        shift = top - round(self.scroll_y)
        if plan.full or plan.shift != shift or (shift and not self._scroll_by_terminal(shift)):
            if shift:
                self._scroll_owner = "frame"
                try:
                    self.scroll_to(y=top, animate=False, immediate=True, force=True)
                finally:
                    self._scroll_owner = ""
            super().refresh()
            return
        width = self.scrollable_content_region.width
        for start, cell, count in plan.spans:
            super().refresh(Region(cell, start, width - cell, count))

    def _scroll_by_terminal(self, shift: int) -> bool:
        """Move the rows on screen by `shift` in the terminal itself, if it can be done."""
        if not enabled("terminal_scroll"):
            return False
        from ink_tui.fastpaths import terminal_scroll

        if not terminal_scroll.arrange(self, shift, self.scrollable_content_region):
            return False
        self._scroll_owner = "terminal"
        try:
            top = round(self.scroll_y) + shift
            self.scroll_to(y=top, animate=False, immediate=True, force=True)
        finally:
            self._scroll_owner = ""
        # The rows that came in are blank on the terminal from edge to edge: their
        # padding too, which a row's own refresh (content cells) does not draw.
        height = self.scrollable_content_region.height
        first = height - shift if shift > 0 else 0
        left = -self.content_offset.x
        super().refresh(Region(left, first, self.size.width, min(abs(shift), height)))
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.refresh()
        return True
