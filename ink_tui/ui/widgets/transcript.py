"""The conversation, block by block, fed by run events.

`Transcript` maps each bus event to one plain method (`add_user`, `append_answer`,
`tool_finished`, ...); a resumed session calls the same methods to rebuild the same view
without events. Streamed text is only buffered when it arrives: one timer per frame
flushes the open answer and reasoning blocks, so a burst of tiny deltas costs one redraw.

Scrolling follows new output while the user is at the bottom. Once they scroll up it
stays put and a "↓ new output below" marker shows until they are back at the bottom.
Events are expected on the app's event loop (the controller runs in an async worker).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.events import Click
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from ink_tui.control.bus import EventBus
from ink_tui.core.events import (
    Event,
    MessageEnd,
    Notice,
    NoticeLevel,
    RunEnd,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
    UserMessageEvent,
)
from ink_tui.core.messages import ToolCall, UserKind
from ink_tui.core.tool_api import ToolResult
from ink_tui.ui.widgets.answer_block import AnswerBlock
from ink_tui.ui.widgets.notice_block import NoticeBlock
from ink_tui.ui.widgets.thinking_block import ThinkingBlock
from ink_tui.ui.widgets.tool_block import ToolBlock
from ink_tui.ui.widgets.user_block import UserBlock

FRAME_S = 1 / 60

BlockT = TypeVar("BlockT", bound=Widget)
StreamingBlock = AnswerBlock | ThinkingBlock
_BLOCK_TYPES = (UserBlock, ThinkingBlock, AnswerBlock, ToolBlock, NoticeBlock)


class NewOutputMarker(Static):
    """Shown while the user reads above new output; a click jumps to the end."""

    DEFAULT_CSS = """
    NewOutputMarker {
        dock: bottom;
        width: auto;
        height: 1;
        padding: 0 1;
        offset-x: 2;
        background: $accent;
        color: $text;
        text-style: bold;
        display: none;
    }
    NewOutputMarker.-visible {
        display: block;
    }
    """

    def __init__(self) -> None:
        super().__init__("↓ new output below")

    def on_click(self, event: Click) -> None:
        event.stop()
        if isinstance(self.parent, Transcript):
            self.parent.follow()


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        width: 1fr;
        scrollbar-gutter: stable;
        padding: 0 0 0 1;
    }
    Transcript.-hide-thinking ThinkingBlock {
        display: none;
    }
    """

    show_thinking: reactive[bool] = reactive(True)

    def __init__(self, bus: EventBus, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._bus = bus
        self._unsubscribe: Callable[[], None] = lambda: None
        self._answer: AnswerBlock | None = None
        # Whitespace that came before any real text: a reply of only tool calls (or
        # stray newlines) gets no empty answer block.
        self._answer_lead = ""
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        # Blocks holding text not drawn yet; the frame timer drains them.
        self._dirty: dict[StreamingBlock, None] = {}
        self._frame: Timer | None = None
        self._following = True
        self.marker = NewOutputMarker()

    def compose(self) -> ComposeResult:
        yield self.marker

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self._schedule_flush()

    def on_unmount(self) -> None:
        self._unsubscribe()

    # -- events -> blocks -----------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, RunStart):
            if event.kind == "shell":
                self.add_shell(event.prompt)
        elif isinstance(event, UserMessageEvent):
            self.add_user(event.text, event.kind)
        elif isinstance(event, ThinkingDelta):
            self.append_thinking(event.text)
        elif isinstance(event, TextDelta):
            self.append_answer(event.text)
        elif isinstance(event, MessageEnd):
            self.end_answer()
        elif isinstance(event, ToolStart):
            self.add_tool(event.call, event.concurrent)
        elif isinstance(event, ToolRunning):
            self.tool_running(event.call_id)
        elif isinstance(event, ToolSettled):
            self.tool_finished(event.call_id, event.result, event.duration_s)
        elif isinstance(event, ToolEnd):
            if event.call.id not in self._tools:
                self.add_tool(event.call, concurrent=False)
            # A no-op when tool_settled already showed this result.
            self.tool_finished(event.call.id, event.result, event.duration_s)
        elif isinstance(event, Notice):
            # "Interrupting…" is a passing state, not history; RunEnd records the outcome.
            if event.kind != "interrupting":
                self.add_notice(event.text, event.level)
        elif isinstance(event, RunEnd):
            # A failed run's error comes as its own error Notice: nothing to add here.
            self.end_answer()
            if event.stop_reason == "aborted":
                self.add_notice("Interrupted.", "warning")

    # -- plain methods: the view, with or without events -------------------------------

    def add_user(self, text: str, kind: UserKind = "prompt") -> UserBlock:
        self.end_answer()
        return self._add(UserBlock(text, kind))

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
        self._mark_dirty(self._answer)

    def append_thinking(self, text: str) -> None:
        if self._thinking is None:
            block = ThinkingBlock()
            # Reasoning goes above the reply it belongs to, even if the reply began first.
            if self._answer is not None:
                self._add(block, before=self._answer)
            else:
                self._add(block)
            self._thinking = block
        self._thinking.append(text)
        self._mark_dirty(self._thinking)

    def end_answer(self) -> None:
        """The reply is complete: its last block is rendered as finished."""
        if self._answer is not None:
            self._answer.close()
            self._mark_dirty(self._answer)
        self._answer = None
        self._answer_lead = ""
        self._thinking = None

    def add_tool(self, call: ToolCall, concurrent: bool = False) -> ToolBlock:
        self.end_answer()
        block = ToolBlock(call, concurrent)
        self._tools[call.id] = block
        return self._add(block)

    def tool_running(self, call_id: str) -> None:
        block = self._tools.get(call_id)
        if block is not None:
            block.set_running()

    def tool_finished(self, call_id: str, result: ToolResult, duration_s: float) -> None:
        block = self._tools.get(call_id)
        if block is None:
            return
        following = self._following
        if block.finish(result, duration_s):
            self._after_content(following)

    def add_notice(self, text: str, level: NoticeLevel = "info") -> NoticeBlock:
        return self._add(NoticeBlock(text, level))

    # -- thinking and folds ------------------------------------------------------------

    def toggle_thinking(self) -> None:
        self.show_thinking = not self.show_thinking

    def watch_show_thinking(self, show: bool) -> None:
        self.set_class(not show, "-hide-thinking")

    def toggle_all_folds(self) -> None:
        """Expand every fold if any is collapsed, else collapse them all."""
        foldable = [block for block in self.query_children(ToolBlock) if block.foldable]
        expand = any(block.collapsed for block in foldable)
        for block in foldable:
            block.expanded = expand

    def clear_view(self) -> None:
        """Remove everything shown (/clear, /new); the conversation itself is untouched."""
        self.end_answer()
        self._tools.clear()
        self._dirty.clear()
        for child in list(self.children):
            if isinstance(child, _BLOCK_TYPES):
                child.remove()
        self.follow()

    def plain_text(self) -> str:
        """What the transcript shows, as plain text: one paragraph per block."""
        blocks = [child for child in self.children if isinstance(child, _BLOCK_TYPES)]
        if not self.show_thinking:
            blocks = [block for block in blocks if not isinstance(block, ThinkingBlock)]
        return "\n\n".join(block.plain_text() for block in blocks)

    # -- following the output ----------------------------------------------------------

    @property
    def following(self) -> bool:
        return self._following

    def follow(self) -> None:
        """Jump to the end and keep following new output."""
        self._following = True
        self.marker.remove_class("-visible")
        self.scroll_end(animate=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Growth of the content never moves scroll_y, so only the user (or our own
        # scroll_end) gets here: at the bottom means "follow", anywhere else "stay put".
        self._following = new_value >= self.max_scroll_y
        if self._following:
            self.marker.remove_class("-visible")

    def _add(self, block: BlockT, before: Widget | None = None) -> BlockT:
        following = self._following
        self.mount(block, before=before)
        self._after_content(following)
        return block

    def _after_content(self, following: bool) -> None:
        if following:
            self.scroll_end(animate=False)
        else:
            self.marker.add_class("-visible")

    def _mark_dirty(self, block: StreamingBlock) -> None:
        self._dirty[block] = None
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._frame is None and self._dirty and self.is_mounted:
            self._frame = self.set_timer(FRAME_S, self._flush)

    def _flush(self) -> None:
        self._frame = None
        if not self.is_attached:
            return
        following = self._following
        blocks, self._dirty = self._dirty, {}
        for block in blocks:
            if block.is_mounted:
                block.flush()
            else:
                # Mounted during this frame: draw it next frame, with its children ready.
                self._dirty[block] = None
        if len(blocks) > len(self._dirty):
            self._after_content(following)
        self._schedule_flush()

    def flush_now(self) -> None:
        """Draw buffered text now rather than next frame (e.g. before a screenshot)."""
        if self._frame is not None:
            self._frame.stop()
        self._flush()
