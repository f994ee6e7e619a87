"""The public Python API: drive an ink session from a program.

from ink_tui import AgentSession

async with AgentSession.open("path/to/project") as session:
    result = await session.prompt("add a test for total()")
"""

from ink_tui.api.session import (
    AgentSession,
    PromptResult,
    QueuedInput,
    QueueEntryGone,
    SessionBusy,
)
from ink_tui.api.session_open import ModelConfigError
from ink_tui.api.sync_session import SyncAgentSession

__all__ = [
    "AgentSession",
    "ModelConfigError",
    "PromptResult",
    "QueueEntryGone",
    "QueuedInput",
    "SessionBusy",
    "SyncAgentSession",
]
