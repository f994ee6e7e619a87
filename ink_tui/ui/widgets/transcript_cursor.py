"""The transcript's keyboard cursor over tool calls and compaction markers.

Tab moves focus to the transcript; Up/Down walk the foldable rows, Enter folds one, a
click folds the row under it (a click on the "new output below" marker follows the
output instead). Kept apart from `Transcript` as a mixin: it reads the transcript's lines
and scroll position and nothing else of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.events import Click
from textual.geometry import Region

from ink_tui.ui.blocks.compaction_block import CompactionBlock
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.widgets.transcript_rows import on_marker

if TYPE_CHECKING:
    from textual.scroll_view import ScrollView

    from ink_tui.ui.blocks.block import Block
    from ink_tui.ui.widgets.transcript_lines import BlockLines

    # For the checker, the scroll view it is mixed into; at run time nothing.
    _Host = ScrollView
else:
    _Host = object

# What the cursor walks and Enter, a click or Ctrl+O fold: tool calls, compaction markers.
Foldable = ToolBlock | CompactionBlock


class FoldCursor(_Host):
    """Mixed into `Transcript` (first, so its handlers are found): it uses the
    transcript's `_lines`, `_marker`, `_changed`, `flush_now`, `follow`,
    `click_task_row` (transcript_tasks.py) and the scroll view's methods. Not imported
    back from here, so the two modules do not import each other."""

    _cursor: Foldable | None
    _lines: BlockLines
    _marker: bool

    if TYPE_CHECKING:
        # What it uses of `Transcript`, declared for the checker only: defined here, they
        # would hide the transcript's own (this class comes first).
        def _changed(self, block: Block, new_output: bool = False) -> None: ...
        def flush_now(self) -> None: ...
        def follow(self) -> None: ...
        def click_task_row(self, row: TaskBlock, line: int, x: int, width: int) -> bool: ...

    @property
    def cursor(self) -> Foldable | None:
        return self._cursor

    def toggle_all_folds(self) -> None:
        """Expand every fold if any is collapsed, else collapse them all."""
        foldable = [block for block in self._foldables() if block.foldable]
        expand = any(block.collapsed for block in foldable)
        for block in foldable:
            if block.expanded != expand:
                block.set_expanded(expand)
                self._changed(block)

    def _foldables(self) -> list[Foldable]:
        return [block for block in self._lines if isinstance(block, Foldable)]

    def toggle_fold(self, block: Foldable) -> None:
        block.toggle_fold()
        self._changed(block)

    def on_focus(self) -> None:
        if self._cursor is None:
            tools = self._foldables()
            foldable = [block for block in tools if block.foldable]
            candidates = foldable or tools
            self._move_cursor(candidates[-1] if candidates else None, highlight=True)
        else:
            self._cursor.set_highlighted(True)
            self._changed(self._cursor)

    def on_blur(self) -> None:
        if self._cursor is not None:
            self._cursor.set_highlighted(False)
            self._changed(self._cursor)

    def action_cursor(self, step: int) -> None:
        tools = self._foldables()
        if not tools:
            # Nothing to point at: the arrows scroll, as in any scrolling view.
            self.scroll_relative(y=step, animate=False)
            return
        if self._cursor not in tools:
            self._move_cursor(tools[-1])
            return
        index = tools.index(self._cursor) + step
        self._move_cursor(tools[max(0, min(index, len(tools) - 1))])

    def action_toggle_fold(self) -> None:
        if self._cursor is not None:
            self.toggle_fold(self._cursor)

    def _move_cursor(self, block: Foldable | None, highlight: bool | None = None) -> None:
        if self._cursor is not None:
            self._cursor.set_highlighted(False)
            self._changed(self._cursor)
        self._cursor = block
        if block is None:
            return
        block.set_highlighted(self.has_focus if highlight is None else highlight)
        self._changed(block)
        self.flush_now()
        span = self._lines.span(block)
        if span is not None:
            start, height = span
            self.scroll_to_region(
                Region(0, start, 1, height), animate=False, immediate=True, force=True
            )

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.text_selection is not None:
            # A drag that selected text ends in a click too: it must not fold anything.
            return
        if self._on_marker(offset.x, offset.y):
            event.stop()
            self.follow()
            return
        line = round(self.scroll_y) + offset.y
        found = self._lines.block_at(line)
        if found is not None and isinstance(found[0], Foldable):
            event.stop()
            block = found[0]
            self._move_cursor(block)
            # A task row's chips, or a tool call of its transcript, take the click first.
            if isinstance(block, TaskBlock) and self.click_task_row(
                block, line - found[1], offset.x, self._lines.width
            ):
                self._changed(block)
                return
            self.toggle_fold(block)

    def _on_marker(self, x: int, y: int) -> bool:
        last_row = self.scrollable_content_region.height - 1
        return self._marker and y == last_row and on_marker(x)
