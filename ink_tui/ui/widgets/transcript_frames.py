"""When and what the transcript draws: its frames.

Nothing is drawn when an event arrives. A changed block is marked (`_changed`), streamed
text is buffered in its block (`_mark_streaming`), and one timer per frame takes the
text in, measures the changed blocks and repaints (`flush_now`): a burst of tiny deltas
costs one redraw. Streamed text is drawn as it comes, but no sooner than its own frame
after the last (`transcript_pacing.py`). A repaint draws only the rows unlike the last
frame's (`RowRedrawView`), and tells the widgets that move with time, so that they paint
in the same screen update (`FrameBeat`).

Mixed into `Transcript`: it uses the transcript's lines, look, marker and task rows.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.scroll_view import ScrollView

from ink_tui.fastpaths.gc_policy import freeze_long_lived
from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.blocks.block import Block, Look
from ink_tui.ui.blocks.thinking_block import ThinkingBlock
from ink_tui.ui.frame_beat import FrameBeat
from ink_tui.ui.loop_timer import LoopTimer
from ink_tui.ui.widgets import transcript_pacing as pacing
from ink_tui.ui.widgets.transcript_lines import BlockLines
from ink_tui.ui.widgets.transcript_look import TranscriptLook
from ink_tui.ui.widgets.transcript_spinners import Spinners

if TYPE_CHECKING:
    from ink_tui.ui.widgets.row_redraw_view import RowRedrawView
    from ink_tui.ui.widgets.transcript_tasks import TaskRows

    # For the checker, the view it is mixed into; at run time nothing.
    _Host = RowRedrawView
else:
    _Host = object

StreamingBlock = AnswerBlock | ThinkingBlock


class TranscriptFrames(_Host):
    beat: FrameBeat
    tasks: TaskRows
    _lines: BlockLines
    _dirty: dict[StreamingBlock, None]
    _frame: LoopTimer
    _drawn_at: float
    _following: bool
    _marker: bool
    _colours: TranscriptLook
    _spinners: Spinners

    if TYPE_CHECKING:
        # What it uses of `Transcript`, declared for the checker only.
        def _look(self) -> Look: ...
        def _set_marker(self, shown: bool) -> None: ...

    def _changed(self, block: Block, new_output: bool = False) -> None:
        self._lines.touch(block)
        if new_output:
            self._after_content()
        else:
            self._schedule_frame(force=True)

    def _after_content(self) -> None:
        if not self._following:
            self._set_marker(True)
        self._schedule_frame(force=True)

    def _mark_streaming(self, block: StreamingBlock) -> None:
        self._dirty[block] = None
        # A batch of the stream is drawn as it comes, but frames stay a streaming frame
        # apart. Real time, not `clock`'s: a frozen clock must not hold frames back.
        wait = self._drawn_at + pacing.STREAM_FRAME_S - time.monotonic()
        self._schedule_frame(delay=max(0.0, wait))

    def _schedule_frame(self, force: bool = False, delay: float = pacing.FRAME_S) -> None:
        if not self._frame.armed and (self._dirty or force) and self.is_mounted:
            self._frame.start(delay)

    def flush_now(self) -> None:
        """Take in buffered text and measure changed blocks now, not at the next frame."""
        self._frame.cancel()
        self._drawn_at = time.monotonic()
        # A sub-agent's blocks too: `tasks.top` is the row in the main view they are under.
        streaming, self._dirty = self._dirty, {}
        for block in streaming:
            if isinstance(block, AnswerBlock):
                # An answer takes in what fits a few ms of drawing; the rest waits a frame,
                # so keys typed meanwhile are not held up behind a long burst of markdown.
                if block.flush(pacing.ANSWER_BUDGET_S):
                    self._changed_quietly(self.tasks.top(block))
                if block.waiting:
                    self._dirty[block] = None
            elif block.flush():
                self._changed_quietly(self.tasks.top(block))
        content = self.scrollable_content_region
        if content.width <= 0 or not self.is_attached:
            return
        if self._colours.restyle():
            # A new theme: every block is drawn again in its colours.
            self._lines.touch_all()
        top = None if self._following else round(self.scroll_y)
        changed, top = self._lines.measure(
            content.width, self._look(), top=top, rows=content.height
        )
        if self._lines.reflowing:
            self._schedule_frame(force=True, delay=pacing.REFLOW_PAUSE_S)
        elif self._lines.bulk_settled():
            freeze_long_lived()
        self._schedule_frame()
        if not changed:
            if self._following and round(self.scroll_y) < self.max_scroll_y:
                # Only the height changed (panels above the input grew or gave way): a
                # transcript that follows shows its end again.
                self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)
            return
        size = Size(content.width, self._lines.height)
        if size != self.virtual_size:
            # No layout of the screen: the transcript's own size stays, only what scrolls.
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)
        self._repaint_at(self.max_scroll_y if top is None else top)
        self.beat.beat()

    def _repaint_at(self, top: int) -> None:
        """Show the lines from `top` on, drawing only the rows unlike the last frame's."""
        content = self.scrollable_content_region
        look = self._look()
        line = self._lines.line
        rows = [line(top + row, look) for row in range(content.height)]
        frame = None
        if self.text_selection is None:
            frame = (content.size, look, self._colours.base, self._marker)
        self.redraw(top, rows, frame)

    def _changed_quietly(self, block: Block | None) -> None:
        if block is not None:  # None: a folded task row hides it
            self._lines.touch(block)
            self._set_marker(self._marker or not self._following)

    def _turn_spinners(self) -> None:
        turning = self._spinners.turning()
        for block in turning:
            block.changed()
            self._lines.touch(block)
        if turning:
            self.flush_now()
