"""The public side of a session's state: `state_change`, and the one `agent_settled` of
a prompt, with how its last run ended and the input its settle handed back.

"Done" is `agent_settled`: it comes when the session goes from running (or
interrupting) to idle or exited, once per prompt however many runs it held, with the
last run's stop reason and error and what the settle of an aborted or failed run put
back in the editor (`restored_text`, `restored_count`).
"""

from __future__ import annotations

from collections.abc import Callable

from ink_tui.control import public_event_types as pub
from ink_tui.control.public_event_types import EndReason, PublicEvent, PublicState
from ink_tui.core.events import StateChange

Emit = Callable[[PublicEvent], None]
Head = Callable[[], pub.Envelope]


class Settle:
    def __init__(self) -> None:
        self.state: PublicState = "idle"
        # How the last run ended (stop reason, error), for agent_settled.
        self._last_end: tuple[EndReason, str | None] | None = None
        # What the settle of an aborted or failed run handed back (text, count).
        self._restored: list[tuple[str, int]] = []

    def run_started(self) -> None:
        self._last_end = None

    def run_ended(self, stop: EndReason, error: str | None) -> None:
        self._last_end = (stop, error)

    def input_restored(self, text: str, count: int) -> None:
        """Input handed back to the editor (`text` masked already): the settle of an
        ended run's carries it."""
        if self._last_end is not None:
            self._restored.append((text, count))

    def state_changed(self, event: StateChange, emit: Emit, head: Head) -> None:
        state: PublicState = event.state
        if state == "running" and event.interrupts > 0:
            state = "interrupting"
        was_busy = self.state in ("running", "interrupting")
        if state != self.state:
            self.state = state
            emit(
                pub.StateChangeEvent(
                    type="state_change", **head(), state=state, exit_code=event.exit_code
                )
            )
        if was_busy and state in ("idle", "exited"):
            stop, error = self._last_end or ("aborted", None)
            restored = self._restored
            self._restored = []
            emit(
                pub.AgentSettledEvent(
                    type="agent_settled",
                    **head(),
                    stop_reason=stop,
                    error=error,
                    restored_text="\n\n".join(t for t, _ in restored) or None,
                    restored_count=sum(count for _, count in restored),
                )
            )
            self._last_end = None
