"""What an extension may set off on its own, so that none can keep a session going for ever.

Two budgets, per extension, both reset by the next user input (a prompt, a steer or
follow-up of the user's reaching the model, one of the extension's commands run by the
user):

- Turns: at most `MAX_TURNS_PER_PROMPT` messages that make the model work (one that
  starts a run while idle, or steers / follows up a running one) between two user inputs.
  An `agent_settled` handler that starts a run every time stops there.
- Rate: at most `MAX_CALLS_PER_SECOND` notices, messages and reported failures in any one
  second. A `notice` handler that notifies (each notice calls it again) stops there.

And a user's abort is final: after a run ends aborted, no extension may start or extend a
run until the next user input.

An extension over a budget is *stopped* until the next user input: its `notify` and
`send_message` raise `ExtensionStopped`, its event handlers are not called, its failures
are only logged; its `tool_call` checks still run (a guard is never switched off).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

MAX_TURNS_PER_PROMPT = 10
MAX_CALLS_PER_SECOND = 50
WINDOW_S = 1.0


class ExtensionStopped(RuntimeError):
    """Raised into an extension that called `notify` / `send_message` while stopped."""


class Budget:
    def __init__(
        self,
        *,
        turns: int = MAX_TURNS_PER_PROMPT,
        per_second: int = MAX_CALLS_PER_SECOND,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.turns = turns
        self.per_second = per_second
        self._clock = clock
        self._turns_used: dict[str, int] = {}
        self._recent: dict[str, deque[float]] = {}
        # Why each stopped extension was stopped, until the next user input.
        self.stopped: dict[str, str] = {}
        # Set by an aborted run: no extension starts or extends a run until user input.
        self.halted = False

    def user_input(self) -> None:
        self._turns_used.clear()
        self._recent.clear()
        self.stopped.clear()
        self.halted = False

    def aborted(self) -> None:
        self.halted = True

    def spend(self, extension: str, *, trigger: bool) -> str | None:
        """Count one call of `extension` (`trigger`: it would make the model work). None
        when it may go ahead; else why it is stopped (from now until the next user input)."""
        if extension in self.stopped:
            return self.stopped[extension]
        reason = None
        used = self._turns_used.get(extension, 0)
        if trigger and self.halted:
            reason = (
                "the user aborted the run; no extension may start or extend a run until "
                "the next user input"
            )
        elif trigger and used >= self.turns:
            reason = (
                f"it set off {used} model turns since the last user input (at most "
                f"{self.turns} per user prompt)"
            )
        else:
            now = self._clock()
            recent = self._recent.setdefault(extension, deque())
            while recent and now - recent[0] >= WINDOW_S:
                recent.popleft()
            if len(recent) >= self.per_second:
                reason = (
                    f"more than {self.per_second} notices, messages and failures in one "
                    "second (a loop?)"
                )
            else:
                recent.append(now)
        if reason is not None:
            self.stopped[extension] = reason
            return reason
        if trigger:
            self._turns_used[extension] = used + 1
        return None
