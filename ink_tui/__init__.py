"""ink_tui: a terminal coding agent built around run control.

`from ink_tui import AgentSession` is the public API for programs (see ink_tui/api/).
It is imported on first use, so the `ink` command and the app's first frame never pay
for it.
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "AgentSession",
    "ModelConfigError",
    "PromptResult",
    "QueueEntryGone",
    "QueuedInput",
    "RewindRefused",
    "SessionBusy",
    "SyncAgentSession",
]

if TYPE_CHECKING:
    from ink_tui.api import (
        AgentSession,
        ModelConfigError,
        PromptResult,
        QueuedInput,
        QueueEntryGone,
        RewindRefused,
        SessionBusy,
        SyncAgentSession,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        import ink_tui.api

        return getattr(ink_tui.api, name)
    raise AttributeError(f"module 'ink_tui' has no attribute {name!r}")
