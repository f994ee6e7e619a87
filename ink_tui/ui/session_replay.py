"""Drawing a saved session into the transcript, as it looked when it happened."""

from __future__ import annotations

from collections.abc import Iterable

from ink_tui.core.tool_api import ToolResult
from ink_tui.session.entries import (
    AssistantEntry,
    CompactionEntry,
    Entry,
    ErrorEntry,
    InterruptEntry,
    ModelChangeEntry,
    ToolResultEntry,
    UserEntry,
)
from ink_tui.ui.widgets.transcript import Transcript


def replay(transcript: Transcript, entries: Iterable[Entry]) -> None:
    for entry in entries:
        if isinstance(entry, UserEntry):
            message = entry.message
            transcript.add_user(message.content, message.kind, message.source, message.custom_type)
        elif isinstance(entry, AssistantEntry):
            message = entry.message
            if message.thinking:
                transcript.append_thinking(message.thinking)
            if message.text.strip():
                transcript.begin_answer()
                transcript.append_answer(message.text)
                transcript.end_answer()
            for call in message.tool_calls:
                transcript.add_tool(call)
        elif isinstance(entry, ToolResultEntry):
            result = ToolResult(
                content=entry.message.content,
                is_error=entry.message.is_error,
                details=dict(entry.details),
            )
            transcript.tool_finished(entry.message.call_id, result, entry.duration_s)
        elif isinstance(entry, InterruptEntry):
            transcript.add_notice("Interrupted.", "warning")
        elif isinstance(entry, ErrorEntry):
            transcript.add_notice(f"Run failed: {entry.text}", "error")
        elif isinstance(entry, CompactionEntry):
            transcript.add_compaction(
                entry.summary, entry.tokens_before, entry.tokens_after, entry.reason
            )
        elif isinstance(entry, ModelChangeEntry):
            transcript.add_notice(f"Model changed to {entry.model}.")
    transcript.flush_now()
