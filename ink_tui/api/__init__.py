"""The public Python API: drive an ink session from a program.

from ink_tui import AgentSession

async with AgentSession.open("path/to/project") as session:
    result = await session.prompt("add a test for total()")

Importing it and opening sessions change no process-wide state (signal handlers,
environment, subreaper bit); `install_process_guards()` opts in to what the `ink`
command sets up (see process_guards.py).
"""

from ink_tui.api.process_guards import install_process_guards
from ink_tui.api.session import (
    AgentSession,
    PromptResult,
    QueuedInput,
    QueueEntryGone,
    SessionBusy,
)
from ink_tui.api.session_open import ModelConfigError
from ink_tui.api.subagents import AgentInfo, AgentStopped, RecordedAgent
from ink_tui.api.sync_session import SyncAgentSession
from ink_tui.control.subagents import AgentGone
from ink_tui.session.rewind import RewindRefused

__all__ = [
    "AgentGone",
    "AgentInfo",
    "AgentSession",
    "AgentStopped",
    "ModelConfigError",
    "PromptResult",
    "QueueEntryGone",
    "QueuedInput",
    "RecordedAgent",
    "RewindRefused",
    "SessionBusy",
    "SyncAgentSession",
    "install_process_guards",
]
