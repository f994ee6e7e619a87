"""Sub-agents' transcripts under their task rows, and the row's stop and steer.

A sub-agent's events never reach the main transcript's blocks (the seed's rule: no
sub-agent deltas among the parent's). `TaskRows` takes them instead: its
`SubagentStart` finds the row of the `task` call that started it (in the main view, or
in its parent sub-agent's), and from then on each of its events goes to that row's
`InnerView`, which has the transcript's plain methods (`TranscriptView`), so the same
mapping (`transcript_events.show_event`) and the same session replay draw it. Its
answers and reasoning stream as the main ones do: marked dirty here, taken in by the
transcript's frame timer within the same budget, and only the row they sit under is
measured again.

`TaskKeys` is mixed into the transcript for the row's keys and chips: on a running
row, `x` stops that sub-agent and `s` steers it (only with the transcript focused, so
typing in the input is never taken); a click on `■ stop` / `✎ steer` does the same. Both
post the shared requests (`ui/agent_requests.py`) for the app to carry out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ink_tui.ui.agent_requests import SteerAgentRequested, StopAgentRequested
from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.blocks.block import Block
from ink_tui.ui.blocks.compaction_block import CompactionBlock
from ink_tui.ui.blocks.notice_block import NoticeBlock
from ink_tui.ui.blocks.task_block import Chip, TaskBlock, is_task_call
from ink_tui.ui.blocks.thinking_block import ThinkingBlock
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.blocks.user_block import UserBlock

if TYPE_CHECKING:
    from textual.message import Message

    from ink_tui.core.events import Event, NoticeLevel
    from ink_tui.core.messages import ToolCall, UserKind
    from ink_tui.core.tool_api import ToolResult
    from ink_tui.session.entries import SubagentEntry
    from ink_tui.ui.widgets.transcript_cursor import Foldable

StreamingBlock = AnswerBlock | ThinkingBlock


def new_tool_block(call: ToolCall, concurrent: bool = False) -> ToolBlock:
    """The block of one tool call: a task row for a `task` call."""
    return TaskBlock(call, concurrent) if is_task_call(call) else ToolBlock(call, concurrent)


class InnerView:
    """One sub-agent's transcript: the transcript's plain methods over its row's children."""

    def __init__(self, row: TaskBlock, rows: TaskRows) -> None:
        self.row = row
        self._rows = rows
        self._answer: AnswerBlock | None = None
        self._answer_lead = ""
        self._thinking: ThinkingBlock | None = None
        self.tools: dict[str, ToolBlock] = {}

    def _add(self, block: Block, before: Block | None = None) -> Block:
        children = self.row.children
        if before is not None and before in children:
            children.insert(children.index(before), block)
        else:
            children.append(block)
        self._rows.owner[block] = self.row
        self._rows.changed(self.row)
        return block

    def add_user(
        self,
        text: str,
        kind: UserKind = "prompt",
        source: str | None = None,
        custom_type: str | None = None,
    ) -> Block:
        self.end_answer()
        return self._add(UserBlock(text, kind, source, custom_type))

    def add_shell(self, command_line: str) -> Block:
        self.end_answer()
        return self._add(UserBlock(command_line, "shell"))

    def begin_answer(self) -> None:
        self.end_answer()

    def append_answer(self, text: str) -> None:
        if self._answer is None:
            if not (self._answer_lead + text).strip():
                self._answer_lead += text
                return
            self._answer = AnswerBlock()
            self._add(self._answer)
            text, self._answer_lead = self._answer_lead + text, ""
        self._answer.append(text)
        self._rows.mark_streaming(self._answer)

    def append_thinking(self, text: str) -> None:
        if self._thinking is None:
            self._thinking = ThinkingBlock()
            self._add(self._thinking, before=self._answer)
        self._thinking.append(text)
        self._rows.mark_streaming(self._thinking)

    def end_answer(self) -> None:
        if self._answer is not None:
            self._answer.close()
            self._rows.mark_streaming(self._answer)
        self._answer = None
        self._answer_lead = ""
        self._thinking = None

    def add_tool(self, call: ToolCall, concurrent: bool = False) -> Block:
        self.end_answer()
        block = self.tools[call.id] = new_tool_block(call, concurrent)
        return self._add(block)

    def tool_asking(self, call_id: str) -> None:
        block = self.tools.get(call_id)
        if block is not None and block.set_asking():
            self._rows.changed(self.row)

    def tool_running(self, call_id: str) -> None:
        block = self.tools.get(call_id)
        if block is not None and block.set_running():
            self._rows.changed(self.row)

    def tool_finished(self, call_id: str, result: ToolResult, duration_s: float | None) -> None:
        block = self.tools.get(call_id)
        if block is not None and block.finish(result, duration_s):
            self._rows.changed(self.row)

    def has_tool(self, call_id: str) -> bool:
        return call_id in self.tools

    def add_notice(self, text: str, level: NoticeLevel = "info") -> Block:
        return self._add(NoticeBlock(text, level))

    def add_compaction(
        self, summary: str, tokens_before: int = 0, tokens_after: int = 0, reason: str = ""
    ) -> Block:
        self.end_answer()
        return self._add(CompactionBlock(summary, tokens_before, tokens_after, reason))


class TaskRows:
    """Routes each sub-agent's events to its row; `changed(top_row)` and
    `mark_streaming(block)` are the transcript's (a row in the main view is redrawn)."""

    def __init__(
        self,
        main_tools: dict[str, ToolBlock],
        changed: Callable[[Block], None],
        mark_streaming: Callable[[StreamingBlock], None],
    ) -> None:
        self._main_tools = main_tools
        self._changed = changed
        self._mark_streaming = mark_streaming
        self.views: dict[str, InnerView] = {}
        # Each block of a sub-agent's transcript -> the row it is drawn under.
        self.owner: dict[Block, TaskBlock] = {}
        # A resumed session's sub-agents of sub-agents, by task call: each one's entry
        # comes before its parent's (it ended first), so before its row exists.
        self.pending: dict[str, SubagentEntry] = {}

    def clear(self) -> None:
        self.views.clear()
        self.owner.clear()
        self.pending.clear()

    def top(self, block: Block) -> Block | None:
        """The main view's block that `block` is drawn in (itself, or its outermost row),
        every row on the way marked changed; None when a folded row hides it (nothing to
        draw again: a folded row is its state line)."""
        while (row := self.owner.get(block)) is not None:
            if not row.expanded:
                return None
            row.child_changed()
            block = row
        return block

    def changed(self, row: TaskBlock) -> None:
        """`row` itself changed (its state line, or a block of its transcript came)."""
        row.changed()
        top = self.top(row)
        if top is not None:
            self._changed(top)

    def mark_streaming(self, block: StreamingBlock) -> None:
        self._mark_streaming(block)

    def view_for_call(self, call_id: str, agent_id: str | None = None) -> InnerView | None:
        """The inner view under the task row of `call_id`, made on first use; the call is
        the main agent's (`agent_id` None) or that sub-agent's."""
        tools = self._main_tools
        if agent_id is not None:
            parent = self.views.get(agent_id)
            if parent is None:
                return None
            tools = parent.tools
        row = tools.get(call_id)
        return self.view_of(row) if isinstance(row, TaskBlock) else None

    def view_of(self, row: TaskBlock) -> InnerView:
        for view in self.views.values():
            if view.row is row:
                return view
        view = InnerView(row, self)
        if row.agent_id is not None:
            self.views[row.agent_id] = view
        return view

    def show(self, event: Event) -> None:
        """One event of a sub-agent (`event.agent_id` set), under its row."""
        from ink_tui.core.events import SubagentEnd, SubagentStart
        from ink_tui.ui.widgets.transcript_events import show_event

        agent_id = event.agent_id
        if agent_id is None:
            return
        if isinstance(event, SubagentStart) and event.parent_call_id is not None:
            view = self.view_for_call(event.parent_call_id, event.parent_agent_id)
            if view is None:
                return  # its row was cleared away (/clear) or never shown
            self.views[agent_id] = view
        view = self.views.get(agent_id)
        if view is None:
            return
        row = view.row
        shown = row.note(event)
        show_event(view, event)
        if isinstance(event, SubagentEnd):
            view.end_answer()
        if shown:
            self.changed(row)


class TaskKeys:
    """Mixed into `Transcript`: the running task row's stop and steer (keys, chips)."""

    if TYPE_CHECKING:

        @property
        def cursor(self) -> Foldable | None: ...

        def post_message(self, message: Message) -> bool: ...

    def action_stop_agent(self) -> None:
        self._ask_row(self.cursor, "stop")

    def action_steer_agent(self) -> None:
        self._ask_row(self.cursor, "steer")

    def _ask_row(self, row: Block | None, chip: Chip) -> bool:
        if not isinstance(row, TaskBlock) or not row.agent_running or row.agent_id is None:
            return False
        request = StopAgentRequested if chip == "stop" else SteerAgentRequested
        self.post_message(request(row.agent_id, row.description))
        return True

    def click_task_row(self, row: TaskBlock, line: int, x: int, width: int) -> bool:
        """A click on the row's `line` at column `x`: True if a chip, or a tool call of
        its transcript (folded or unfolded by it), took it."""
        if line == 0:
            chip = row.chip_at(x, width)
            return chip is not None and self._ask_row(row, chip)
        child = row.child_at(line)
        if isinstance(child, ToolBlock) and child.foldable:
            child.toggle_fold()
            row.child_changed()
            return True
        return False
