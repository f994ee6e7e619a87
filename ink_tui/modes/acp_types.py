"""Names `ink acp` shares between its modules: the session updates it sends, its
extension methods and notifications, and the approval modes it advertises."""

from __future__ import annotations

from typing import Final

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    SessionMode,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

# The `session/update`s ink sends (no plan: ink has no plan concept).
SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | UsageUpdate
)

# ink's key in every `_meta` it reads or writes.
META_KEY: Final = "ink"
# Extension notifications (sent as `_ink/...`): the whole queue after any change, and
# queued input handed back after an abort or failure.
QUEUE_UPDATE: Final = "ink/queue_update"
INPUT_RESTORED: Final = "ink/input_restored"
# The steering extension the Claude Code and Codex adapters ship (`_session/steering`).
STEERING: Final = "session/steering"
# Taking queued input back before the loop takes it (session/inject's revoke_inject).
REMOVE_QUEUED: Final = "ink/remove_queued"
CLEAR_QUEUE: Final = "ink/clear_queue"

# `session/set_mode` picks ink's approval policy.
MODES: Final = (
    SessionMode(
        id="ask",
        name="Ask",
        description="Ask before bash, write and edit",
    ),
    SessionMode(
        id="edits",
        name="Accept edits",
        description="Ask only before bash and writes outside the workspace or protected places",
    ),
    SessionMode(id="auto", name="Auto", description="Never ask"),
)
MODE_IDS: Final = tuple(mode.id for mode in MODES)
