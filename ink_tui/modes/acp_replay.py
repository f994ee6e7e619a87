"""`session/load`: a saved conversation told again as `session/update`s, as ACP asks
("the Agent MUST replay the entire conversation to the Client in the form of
`session/update` notifications") before the load's response.

User messages are `user_message_chunk`s (a compaction's summary is one too, marked
`_meta.ink.kind = "summary"`), replies `agent_thought_chunk` then `agent_message_chunk`,
tool calls a `tool_call` then its `tool_call_update` with the result the model got and
`completed` / `failed`. Sub-agents' own conversations are not replayed (their task
call's result stands for them). Diffs are not rebuilt: the file texts of then are gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.helpers import text_block, update_agent_message_text, update_agent_thought_text
from acp.schema import ToolCallProgress, ToolCallStart, UserMessageChunk

from ink_tui.control.public_event_types import HistoryMessage
from ink_tui.modes import acp_tools
from ink_tui.modes.acp_types import META_KEY, SessionUpdate


def replay(messages: list[HistoryMessage], workspace: Path) -> list[SessionUpdate]:
    updates: list[SessionUpdate] = []
    for message in messages:
        if message["role"] == "user":
            meta: dict[str, Any] = {"kind": message["kind"]}
            if "entry_id" in message:
                meta["entryId"] = message["entry_id"]
            updates.append(
                UserMessageChunk(
                    session_update="user_message_chunk",
                    content=text_block(message["content"]),
                    field_meta={META_KEY: meta},
                )
            )
        elif message["role"] == "assistant":
            if message["thinking"]:
                updates.append(update_agent_thought_text(message["thinking"]))
            if message["text"]:
                updates.append(update_agent_message_text(message["text"]))
            for call in message["tool_calls"]:
                name, arguments = call["name"], call["arguments"]
                updates.append(
                    ToolCallStart(
                        session_update="tool_call",
                        tool_call_id=call["id"],
                        title=acp_tools.tool_title(name, arguments),
                        kind=acp_tools.tool_kind(name),
                        status="pending",
                        locations=acp_tools.tool_locations(workspace, name, arguments) or None,
                        raw_input=arguments,
                    )
                )
        else:
            updates.append(
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=message["call_id"],
                    status="failed" if message["is_error"] else "completed",
                    content=[acp_tools.text_content(message["content"])]
                    if message["content"]
                    else None,
                )
            )
    return updates
