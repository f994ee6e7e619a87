"""Core values as the JSON-ready dicts that public events and `get_messages` carry:
queue entries, token usage, assistant messages and their tool calls, a conversation's
messages, the background jobs. Plain conversions, no state and no redaction (the
projection in public_events.py redacts what it takes from here)."""

from __future__ import annotations

from ink_tui.control import public_event_types as pub
from ink_tui.control.public_event_types import HistoryMessage
from ink_tui.core.events import JobView, QueueEntryView
from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)


def queue_entries(entries: list[QueueEntryView]) -> list[pub.QueueEntryInfo]:
    return [
        {
            "id": e.id,
            "text": e.text,
            "mode": e.mode,
            "shell": e.shell,
            "source": e.source,
            "custom_type": e.custom_type,
        }
        for e in entries
    ]


def usage_dict(usage: Usage) -> pub.UsageInfo:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cached_tokens": usage.cached_tokens,
    }


def message_dict(message: AssistantMessage) -> pub.AssistantMessageInfo:
    return {
        "role": "assistant",
        "text": message.text,
        "thinking": message.thinking,
        "tool_calls": [call_dict(c) for c in message.tool_calls],
        "finish_reason": message.finish_reason,
        "usage": usage_dict(message.usage),
        "model": message.model,
    }


def call_dict(call: ToolCall) -> pub.AssistantToolCall:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def history_dict(message: Message) -> HistoryMessage:
    """One message of the conversation as the model has it."""
    match message:
        case UserMessage():
            user: pub.UserMessageInfo = {
                "role": "user",
                "kind": message.kind,
                "content": message.content,
            }
            if message.source is not None:
                user["source"] = message.source
                user["custom_type"] = message.custom_type
            if isinstance(message, SummaryMessage):
                # The summary a compaction put in place of the older messages.
                user["kind"] = "summary"
            elif message.entry_id is not None:
                user["entry_id"] = message.entry_id
            return user
        case AssistantMessage():
            return message_dict(message)
        case ToolResultMessage():
            return {
                "role": "tool",
                "call_id": message.call_id,
                "tool_name": message.tool_name,
                "content": message.content,
                "is_error": message.is_error,
            }


def job_infos(jobs: list[JobView]) -> list[pub.JobInfo]:
    return [
        {
            "number": job.number,
            "pid": job.pid,
            "argv": job.argv,
            "command": job.command,
            "call_id": job.call_id,
            "started": job.started,
        }
        for job in jobs
    ]
