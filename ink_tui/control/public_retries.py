"""The public side of a retried model call, per agent (None: the top-level agent).

The retry notice becomes the failed attempt's `agent_end` (`will_retry`; a sub-agent's
attempt has none, it has no run of its own) and `auto_retry_start`. The retry ends with
`auto_retry_end`: a success at the next attempt's first sign of life (text, thinking, a
finished message or a tool starting), a failure when the agent ends before one.
"""

from __future__ import annotations

from collections.abc import Callable

from ink_tui.control import public_event_types as pub
from ink_tui.control.public_event_types import PublicEvent
from ink_tui.core.events import Event, MessageEnd, Notice, TextDelta, ThinkingDelta, ToolStart

Emit = Callable[[PublicEvent], None]
Head = Callable[[], pub.Envelope]


class Retries:
    def __init__(self) -> None:
        # The attempt that failed and is being retried (its auto_retry_end is to come).
        self._retrying: dict[str | None, int] = {}

    @property
    def pending(self) -> bool:
        """Whether any agent's retry waits for its sign of life or its end."""
        return bool(self._retrying)

    def seen(self, event: Event, emit: Emit, head: Head) -> None:
        """Before `event` itself: if it is the retried attempt's sign of life, the retry
        succeeded."""
        agent = event.agent_id
        if agent in self._retrying and _is_sign_of_life(event):
            attempt = self._retrying.pop(agent) + 1
            emit(
                pub.AutoRetryEndEvent(
                    type="auto_retry_end", **head(), success=True, attempt=attempt
                )
            )

    def scheduled(self, event: Notice, emit: Emit, head: Head, text: Callable[[str], str]) -> None:
        """The retry notice: another attempt comes after a delay."""
        data = event.data
        agent = event.agent_id
        reason = text(str(data.get("reason", "")))
        retrying = self._retrying[agent] = int(data.get("attempt", 0))
        if agent is None:
            # A sub-agent's attempt is no agent_end: it has no run of its own.
            emit(_retried_end(head(), reason))
        emit(
            pub.AutoRetryStartEvent(
                type="auto_retry_start",
                **head(),
                attempt=retrying + 1,
                max_attempts=int(data.get("max_attempts", 0)),
                delay_s=round(float(data.get("delay", 0.0)), 3),
                reason=reason,
            )
        )

    def ended(self, agent: str | None, emit: Emit, head: Head) -> None:
        """The agent ended while an attempt was being retried: that retry failed."""
        if agent in self._retrying:
            attempt = self._retrying.pop(agent) + 1
            emit(
                pub.AutoRetryEndEvent(
                    type="auto_retry_end", **head(), success=False, attempt=attempt
                )
            )


def _retried_end(envelope: pub.Envelope, reason: str) -> pub.AgentEndEvent:
    # The envelope spelled out, not unpacked: agent_end has keys a retried attempt
    # leaves out, which the checker cannot tell are absent from an unpacked one.
    return {
        "type": "agent_end",
        "v": envelope["v"],
        "session_id": envelope["session_id"],
        "seq": envelope["seq"],
        "run_id": envelope["run_id"],
        "will_retry": True,
        "stop_reason": None,
        "error": reason,
    }


def _is_sign_of_life(event: Event) -> bool:
    """After a retry was scheduled, these show the next attempt got through."""
    return isinstance(event, TextDelta | ThinkingDelta | MessageEnd | ToolStart)
