"""What `AgentSession` hands back, and what it raises, apart from the session itself:
programs import them from `ink_tui.api` (or `ink_tui.api.session`)."""

from __future__ import annotations

from dataclasses import dataclass

from ink_tui.core.messages import QueueMode


class SessionBusy(RuntimeError):
    """A prompt arrived while a run is in progress and did not say how to deliver it."""


class QueueEntryGone(LookupError):
    """No queued entry has that id (it was sent, removed, or never existed)."""


@dataclass(frozen=True, slots=True)
class QueuedInput:
    id: int
    text: str
    mode: QueueMode
    # "user", or the name of the extension that queued it.
    source: str = "user"


@dataclass(frozen=True, slots=True)
class PromptResult:
    """How a prompt settled."""

    # completed | aborted | max_iterations | failed
    stop_reason: str
    error: str | None = None
    # Queued input handed back by an abort or a failure (joined by blank lines).
    restored_text: str | None = None
    restored_count: int = 0
