"""Which transcript method each run event calls.

The transcript's plain methods are the view; a resumed session calls them without
events (`ui/session_replay.py`), a run calls them through this mapping. The mapping
names those methods in `TranscriptView`, so it needs nothing of the widget: the
transcript imports this module, never the other way round.
"""

from __future__ import annotations

from typing import Any, Protocol

from ink_tui.core.events import (
    ApprovalRequest,
    CompactionEnd,
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


class TranscriptView(Protocol):
    """The transcript's plain methods that run events call (`Transcript` has them)."""

    def add_user(
        self,
        text: str,
        kind: UserKind = "prompt",
        source: str | None = None,
        custom_type: str | None = None,
    ) -> Any: ...

    def add_shell(self, command_line: str) -> Any: ...

    def begin_answer(self) -> None: ...

    def append_answer(self, text: str) -> None: ...

    def append_thinking(self, text: str) -> None: ...

    def end_answer(self) -> None: ...

    def add_tool(self, call: ToolCall, concurrent: bool = False) -> Any: ...

    def tool_asking(self, call_id: str) -> None: ...

    def tool_running(self, call_id: str) -> None: ...

    def tool_finished(self, call_id: str, result: ToolResult, duration_s: float | None) -> None: ...

    def has_tool(self, call_id: str) -> bool: ...

    def add_notice(self, text: str, level: NoticeLevel = "info") -> Any: ...

    def add_compaction(
        self, summary: str, tokens_before: int = 0, tokens_after: int = 0, reason: str = ""
    ) -> Any: ...


def show_event(transcript: TranscriptView, event: Event) -> None:
    if isinstance(event, RunStart):
        if event.kind == "shell":
            transcript.add_shell(event.prompt)
    elif isinstance(event, UserMessageEvent):
        transcript.add_user(event.text, event.kind, event.source, event.custom_type)
    elif isinstance(event, ThinkingDelta):
        transcript.append_thinking(event.text)
    elif isinstance(event, TextDelta):
        transcript.append_answer(event.text)
    elif isinstance(event, MessageEnd):
        transcript.end_answer()
    elif isinstance(event, ToolStart):
        transcript.add_tool(event.call, event.concurrent)
    elif isinstance(event, ApprovalRequest):
        transcript.tool_asking(event.call.id)
    elif isinstance(event, ToolRunning):
        transcript.tool_running(event.call_id)
    elif isinstance(event, ToolSettled):
        transcript.tool_finished(event.call_id, event.result, event.duration_s)
    elif isinstance(event, ToolEnd):
        if not transcript.has_tool(event.call.id):
            transcript.add_tool(event.call, concurrent=False)
        # A no-op when tool_settled already showed this result.
        transcript.tool_finished(event.call.id, event.result, event.duration_s)
    elif isinstance(event, CompactionEnd):
        # An aborted or failed one changed nothing; the run's end or error says so.
        if event.done:
            transcript.add_compaction(
                event.summary, event.tokens_before, event.tokens_after, event.reason
            )
    elif isinstance(event, Notice):
        # "Interrupting…" is a passing state, not history; RunEnd records the outcome.
        if event.kind != "interrupting":
            transcript.add_notice(event.text, event.level)
    elif isinstance(event, RunEnd):
        # A failed run's error comes as its own error Notice: nothing to add here.
        transcript.end_answer()
        if event.stop_reason == "aborted":
            transcript.add_notice("Interrupted.", "warning")
