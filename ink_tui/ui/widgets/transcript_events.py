"""Which transcript method each run event calls.

The transcript's plain methods are the view; a resumed session calls them without
events (`ui/session_replay.py`), a run calls them through this mapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ink_tui.core.events import (
    CompactionEnd,
    Event,
    MessageEnd,
    Notice,
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

if TYPE_CHECKING:
    from ink_tui.ui.widgets.transcript import Transcript


def show_event(transcript: Transcript, event: Event) -> None:
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
