"""The conversation, block by block, fed by run events: one line-API widget.

`Transcript` maps each bus event to one plain method (`add_user`, `append_answer`,
`tool_finished`, ...); a resumed session calls the same methods to rebuild the same view
without events. Blocks (`ink_tui.ui.blocks`) are data, not widgets: the transcript keeps
their lines (`BlockLines`) and draws only the rows on screen, so a session of thousands
of messages stays one widget, and appending or scrolling costs the same at any length.

Nothing is drawn when an event arrives: changed blocks are marked, and one timer per
frame measures them and repaints, so a burst of tiny deltas costs one redraw
(`transcript_frames.py`).

Scrolling follows new output while the user is at the bottom. Once they scroll up it
stays put and a "↓ new output below" marker shows on the last row, a row of its own (no
text beside it), until they are back at the bottom. With the keyboard focus here,
Up/Down move a cursor over the tool calls and Enter folds or unfolds the one under it;
a click on a tool call does the same. A task row holds its sub-agent's transcript
(`transcript_tasks.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, TypeVar

from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.selection import Selection
from textual.strip import Strip

from ink_tui.control.bus import EventBus
from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.blocks.block import Block, Look
from ink_tui.ui.blocks.compaction_block import CompactionBlock
from ink_tui.ui.blocks.notice_block import NoticeBlock
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.blocks.thinking_block import ThinkingBlock
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.blocks.user_block import UserBlock
from ink_tui.ui.frame_beat import FrameBeat
from ink_tui.ui.loop_timer import LoopTimer
from ink_tui.ui.widgets.row_redraw_view import RowRedrawView
from ink_tui.ui.widgets.transcript_cursor import Foldable, FoldCursor
from ink_tui.ui.widgets.transcript_frames import StreamingBlock, TranscriptFrames
from ink_tui.ui.widgets.transcript_lines import BlockLines
from ink_tui.ui.widgets.transcript_look import COMPONENT_CLASSES, COMPONENT_CSS, TranscriptLook
from ink_tui.ui.widgets.transcript_rows import (
    SCREENS_KEPT,
    PlacedRows,
    RowView,
    kept_rows_cache,
    selected_text,
    with_marker,
    with_selection,
)
from ink_tui.ui.widgets.transcript_spinners import Spinners
from ink_tui.ui.widgets.transcript_subscriber import TranscriptSubscriber
from ink_tui.ui.widgets.transcript_tasks import TaskKeys, TaskRows, new_tool_block

if TYPE_CHECKING:
    from ink_tui.core.events import NoticeLevel
    from ink_tui.core.messages import ToolCall, UserKind
    from ink_tui.core.tool_api import ToolResult

BlockT = TypeVar("BlockT", bound=Block)


class Transcript(TaskKeys, FoldCursor, TranscriptFrames, RowRedrawView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = COMPONENT_CLASSES

    DEFAULT_CSS = f"""
    Transcript {{
        height: 1fr;
        width: 1fr;
        scrollbar-gutter: stable;
        overflow-x: hidden;
        padding: 0 0 0 1;
        {COMPONENT_CSS}
    }}
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Previous tool call", show=False),
        Binding("down", "cursor(1)", "Next tool call", show=False),
        Binding("enter", "toggle_fold", "Expand/collapse", show=False),
        Binding("x", "stop_agent", "Stop this sub-agent", show=False),
        Binding("s", "steer_agent", "Steer this sub-agent", show=False),
    ]

    show_thinking: reactive[bool] = reactive(True)

    class Replaced(Message):
        """The view was emptied for a new one (/clear, /new, a resumed session)."""

    def __init__(
        self,
        bus: EventBus,
        *,
        beat: FrameBeat | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._bus = bus
        # Told of every frame drawn, for the widgets that move with time to draw in it.
        self.beat = beat or FrameBeat()
        self._unsubscribe: Callable[[], None] = lambda: None
        self._lines = BlockLines()
        self._answer: AnswerBlock | None = None
        # Whitespace that came before any real text: a reply of only tool calls (or
        # stray newlines) gets no empty answer block.
        self._answer_lead = ""
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        self.tasks = TaskRows(self._tools, self._changed, self._mark_streaming)
        self._spinners = Spinners()
        # Streaming blocks holding text not taken in yet; the frame timer drains them.
        self._dirty: dict[StreamingBlock, None] = {}
        self._frame = LoopTimer(self, self.flush_now)
        # When the last frame was drawn (monotonic seconds): streamed text waits for the
        # next streaming frame from then, no longer.
        self._drawn_at = 0.0
        self._following = True
        self._marker = False
        self._cursor: Foldable | None = None
        self._colours = TranscriptLook(self)
        self._view: RowView | None = None
        # Rows drawn lately, placed and framed, for a few screens (see on_resize).
        self._rows = PlacedRows(SCREENS_KEPT * 24)
        self._framed = kept_rows_cache(self, SCREENS_KEPT * 24)

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(TranscriptSubscriber(self, self.tasks.show))
        self._spinners.attach(self.set_interval, self._turn_spinners)
        self._schedule_frame()

    def on_unmount(self) -> None:
        self._unsubscribe()
        self._frame.cancel()

    # -- plain methods: the view, with or without events -------------------------------

    def add_user(
        self,
        text: str,
        kind: UserKind = "prompt",
        source: str | None = None,
        custom_type: str | None = None,
    ) -> UserBlock:
        """`source`: the extension that sent it (drawn apart from the user's words)."""
        self.end_answer()
        return self._add(UserBlock(text, kind, source, custom_type))

    def add_shell(self, command_line: str) -> UserBlock:
        self.end_answer()
        return self._add(UserBlock(command_line, "shell"))

    def begin_answer(self) -> None:
        """A new reply starts; its blocks are created when text arrives."""
        self.end_answer()

    def append_answer(self, text: str) -> None:
        if self._answer is None:
            if not (self._answer_lead + text).strip():
                self._answer_lead += text
                return
            self._answer = self._add(AnswerBlock())
            text, self._answer_lead = self._answer_lead + text, ""
        self._answer.append(text)
        self._mark_streaming(self._answer)

    def append_thinking(self, text: str) -> None:
        if self._thinking is None:
            block = ThinkingBlock()
            # Reasoning goes above the reply it belongs to, even if the reply began first.
            self._add(block, before=self._answer)
            self._thinking = block
        self._thinking.append(text)
        self._mark_streaming(self._thinking)

    def end_answer(self) -> None:
        """The reply is complete: its last block is drawn as finished."""
        if self._answer is not None:
            self._answer.close()
            self._mark_streaming(self._answer)
        self._answer = None
        self._answer_lead = ""
        self._thinking = None

    def add_tool(self, call: ToolCall, concurrent: bool = False) -> ToolBlock:
        self.end_answer()
        block = new_tool_block(call, concurrent)
        self._tools[call.id] = block
        if block.running:
            self._spinners.start(block)
        return self._add(block)

    def tool_asking(self, call_id: str) -> None:
        """An approval question about the call is open: no spinner until it runs."""
        block = self._tools.get(call_id)
        if block is not None and block.set_asking():
            self._spinners.stop(block)
            self._changed(block)

    def tool_running(self, call_id: str) -> None:
        block = self._tools.get(call_id)
        if block is not None and block.set_running():
            self._spinners.start(block)
            self._changed(block)

    def tool_finished(self, call_id: str, result: ToolResult, duration_s: float | None) -> None:
        block = self._tools.get(call_id)
        if block is not None and block.finish(result, duration_s):
            self._spinners.stop(block)
            self._changed(block, new_output=True)

    def has_tool(self, call_id: str) -> bool:
        return call_id in self._tools

    def add_notice(self, text: str, level: NoticeLevel = "info") -> NoticeBlock:
        return self._add(NoticeBlock(text, level))

    def add_compaction(
        self, summary: str, tokens_before: int = 0, tokens_after: int = 0, reason: str = ""
    ) -> CompactionBlock:
        self.end_answer()
        return self._add(CompactionBlock(summary, tokens_before, tokens_after, reason))

    # -- what is shown -----------------------------------------------------------------

    @property
    def blocks(self) -> list[Block]:
        return list(self._lines)

    def blocks_of(self, kind: type[BlockT]) -> list[BlockT]:
        return [block for block in self._lines if isinstance(block, kind)]

    def plain_text(self) -> str:
        """What the transcript shows, as plain text: one paragraph per block."""
        blocks = list(self._lines)
        if not self.show_thinking:
            blocks = [block for block in blocks if not isinstance(block, ThinkingBlock)]
        texts = (block.plain_text() for block in blocks)
        return "\n\n".join(text for text in texts if text)

    def block_lines(self, block: Block) -> list[Strip]:
        """The lines `block` is drawn as at the current width."""
        self.flush_now()
        if self._lines.index(block) is None or not self._lines.width:
            return []
        return list(self._lines.lines_of(block, self._look()))

    def block_region(self, block: Block) -> Region | None:
        """Where `block` is on screen, relative to this widget; None when scrolled away."""
        self.flush_now()
        span = self._lines.span(block)
        if span is None or not span[1]:
            return None
        start, height = span
        content = self.scrollable_content_region
        top = start - round(self.scroll_y)
        region = Region(
            content.x - self.region.x, top + content.y - self.region.y, content.width, height
        )
        visible = region.intersection(Region(0, 0, self.size.width, self.size.height))
        return visible if visible.height else None

    # -- thinking (folds: transcript_cursor.py) -------------------------------------------

    def toggle_thinking(self) -> None:
        self.show_thinking = not self.show_thinking

    def watch_show_thinking(self) -> None:
        # A task row draws its sub-agent's reasoning too.
        self._lines.reflow([b for b in self._lines if isinstance(b, ThinkingBlock | TaskBlock)])
        self._schedule_frame(force=True)

    def clear_view(self) -> None:
        """Remove everything shown (/clear, /new); the conversation itself is untouched."""
        self.end_answer()
        self._tools.clear()
        self.tasks.clear()
        self._spinners.clear()
        self._dirty.clear()
        self._cursor = None
        self._lines.clear()
        self._rows.clear()
        self._framed.forget()
        self._following = True
        self._marker = False
        # Nothing is left to measure, so no frame would shrink the scrollable area.
        self.virtual_size = Size(0, 0)
        self.scroll_to(y=0, animate=False, immediate=True, force=True)
        self.refresh()
        self.post_message(self.Replaced())

    # -- following the output ----------------------------------------------------------

    @property
    def following(self) -> bool:
        return self._following

    @property
    def reflowing(self) -> bool:
        """Some blocks off screen are still being measured (after a resize or a resume)."""
        return self._lines.reflowing

    @property
    def marker_visible(self) -> bool:
        return self._marker

    def follow(self) -> None:
        """Jump to the end and keep following new output."""
        self._following = True
        self._set_marker(False)
        self.flush_now()
        self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Growth of the content never moves scroll_y, so only the user (or our own
        # scrolling to the end) gets here: at the bottom means "follow", elsewhere "stay".
        self._following = new_value >= self.max_scroll_y
        if self._following:
            self._set_marker(False)

    def _set_marker(self, shown: bool) -> None:
        if shown != self._marker:
            self._marker = shown
            self.refresh()

    # -- drawing -------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # What every row needs, worked out once for the frame: each of these builds new
        # objects when asked (regions, the theme), and a frame asks for every row.
        self._view = self._row_view()
        try:
            return super().render_lines(crop)
        finally:
            self._view = None

    def _row_view(self) -> RowView:
        selection = self.text_selection
        return RowView(
            self.scrollable_content_region,
            round(self.scroll_y),
            self._look(),
            self._colours.base,
            selection,
            None
            if selection is None
            else self.screen.get_component_rich_style("screen--selection"),
        )

    def render_line(self, y: int) -> Strip:
        view = self._view or self._row_view()
        content = view.content
        line_no = view.top + y
        line = self._lines.line(line_no, view.look)
        base = view.base
        if line is None:
            strip = Strip.blank(content.width).apply_style(base)
        else:
            # Offsets tell a mouse selection which character of which line it is on.
            strip = self._rows.row(line, line_no, base)
            if view.selection is not None and view.selection_style is not None:
                strip = with_selection(strip, view.selection, line_no, view.selection_style)
        if self._marker and y == content.height - 1:
            # The marker's row is its own: drawn over a line it would hide part of it,
            # which shows whole once scrolled to (and the marker goes).
            blank = Strip.blank(content.width).apply_style(base)
            strip = with_marker(blank, content.width, base + self._colours.style("marker"))
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text: only the lines it spans are drawn, however long the session."""
        self.flush_now()
        last = self._lines.height - 1
        if last < 0:
            return None
        look = self._look()

        def line_text(y: int) -> str:
            line = self._lines.line(y, look)
            return line.text if line is not None else ""

        return selected_text(selection, line_text, last), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def on_resize(self, event: Resize) -> None:
        rows = SCREENS_KEPT * max(1, self.scrollable_content_region.height)
        self._rows.set_limit(rows)
        self._framed.set_limit(rows)
        self._schedule_frame(force=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._framed.forget()
        self._colours.invalidate()
        self._schedule_frame(force=True)

    def _look(self) -> Look:
        return self._colours.look(self.show_thinking)

    def _add(self, block: BlockT, before: Block | None = None) -> BlockT:
        index = self._lines.index(before) if before is not None else None
        if index is None:
            self._lines.append(block)
        else:
            self._lines.insert(index, block)
        self._after_content()
        return block
