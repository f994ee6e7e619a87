"""Making a loaded history valid for the next model call.

Every tool call must be answered by a tool result right after its assistant message, or
providers reject the whole request. The loop guarantees that while it runs, but a
session killed in the middle of a tool leaves calls without results; this fills them in.
A damaged line skipped by the reader can leave the opposite: results whose call is gone;
those are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

from ink_tui.core.messages import AssistantMessage, Message, ToolResultMessage

NO_RESULT = "no result: the session ended before this call finished"


def complete_tool_results(history: Sequence[Message]) -> tuple[list[Message], int]:
    """A copy of `history` with an error result for every unanswered call; and how many.

    Added results go right after the call's existing results (not at the end), so a
    session resumed after such a crash, with more messages after the gap, loads into the
    same history its resumed run actually sent.
    """
    out: list[Message] = []
    added = 0
    index = 0
    while index < len(history):
        message = history[index]
        out.append(message)
        index += 1
        if not (isinstance(message, AssistantMessage) and message.tool_calls):
            continue
        answered: set[str] = set()
        while index < len(history):
            result = history[index]
            if not isinstance(result, ToolResultMessage):
                break
            answered.add(result.call_id)
            out.append(result)
            index += 1
        for call in message.tool_calls:
            if call.id not in answered:
                out.append(
                    ToolResultMessage(
                        call_id=call.id, tool_name=call.name, content=NO_RESULT, is_error=True
                    )
                )
                added += 1
    return out, added


def drop_orphan_results(history: Sequence[Message]) -> tuple[list[Message], int]:
    """A copy of `history` without tool results that answer no call of the assistant
    message they follow (that message was lost); and how many were dropped."""
    out: list[Message] = []
    dropped = 0
    open_calls: set[str] = set()
    for message in history:
        if isinstance(message, ToolResultMessage):
            if message.call_id not in open_calls:
                dropped += 1
                continue
            open_calls.discard(message.call_id)
        elif isinstance(message, AssistantMessage):
            open_calls = {call.id for call in message.tool_calls}
        else:
            open_calls = set()
        out.append(message)
    return out, dropped
