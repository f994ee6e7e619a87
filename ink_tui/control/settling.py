"""Settling a run: its `RunEnd`, and what becomes of the queue after it.

- Completed (or `max_iterations`, with a notice): the controller runs what is queued.
- Failed: nothing more runs; the user's queued entries go back to the editor.
- Aborted: as failed by default; `interrupt_queue` = "keep" holds the queue, paused,
  and "send" runs it on as if the run had completed.

Restoring hands back the user's entries only: an extension's are dropped with a notice,
since its words must not become the user's by being sent from the editor.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from ink_tui.control.input_queue import InputQueue
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.events import Event, InputRestored, Notice, RunEnd
from ink_tui.core.loop import LoopResult
from ink_tui.core.provider_api import ProviderError

Outcome = Literal["completed", "aborted", "failed"]

RESTORED = "Restored {n} queued {inputs} to the editor."


def describe_error(error: BaseException) -> str:
    if isinstance(error, ProviderError):
        return str(error)
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class Settling:
    """Ends the runs of the `RunController` that owns it, on that controller's queue."""

    def __init__(
        self,
        queue: InputQueue,
        emit: Callable[[Event], None],
        set_paused: Callable[[bool], None],
    ) -> None:
        self.queue = queue
        self.emit = emit
        self.set_paused = set_paused

    def settle(self, result: LoopResult, started: float, settings: RunSettings) -> Outcome:
        self.emit(
            RunEnd(
                stop_reason=result.stop_reason,
                usage=result.usage,
                turns=result.turns,
                duration_s=time.monotonic() - started,
            )
        )
        if result.stop_reason == "aborted":
            return self._settle_abort(settings)
        if result.stop_reason == "max_iterations":
            self.emit(
                Notice(
                    text=(
                        f"Stopped after {settings.loop.max_iterations} rounds of tool "
                        "calls (max_iterations). Send a message to let it continue."
                    ),
                    level="warning",
                    kind="max_iterations",
                )
            )
        return "completed"

    def settle_failure(self, error: Exception, started: float) -> Outcome:
        message = describe_error(error)
        self.emit(RunEnd(stop_reason=None, error=message, duration_s=time.monotonic() - started))
        self.emit(Notice(text=f"Run failed: {message}", level="error", kind="error"))
        self.restore_queue(RESTORED, drop=True)
        return "failed"

    def _settle_abort(self, settings: RunSettings) -> Outcome:
        policy = settings.interrupt_queue
        if policy == "send":
            return "completed"
        if policy == "keep" and len(self.queue):
            self.set_paused(True)
            count = len(self.queue)
            self.emit(
                Notice(
                    text=(
                        f"Kept {count} queued {'input' if count == 1 else 'inputs'}, paused. "
                        "Press Enter on an empty input to run them, or send a new message."
                    ),
                    kind="paused",
                )
            )
            return "aborted"
        self.restore_queue(RESTORED, drop=True)
        return "aborted"

    def restore_queue(self, template: str, *, drop: bool) -> int:
        """Hand the user's queued entries back to the editor; `drop` also takes out the
        extensions' entries (they are not the user's to send, and nothing runs them now)."""
        if drop:
            dropped = self.queue.drain(lambda e: e.source != "user")
            if dropped:
                names = ", ".join(sorted({repr(e.source) for e in dropped}))
                count = len(dropped)
                self.emit(
                    Notice(
                        text=(
                            f"Dropped {count} queued {'message' if count == 1 else 'messages'} "
                            f"from extension {names}."
                        ),
                        kind="dropped",
                    )
                )
        entries = self.queue.drain(lambda e: e.source == "user")
        if not entries:
            return 0
        count = len(entries)
        self.emit(InputRestored(text="\n\n".join(e.text for e in entries), count=count))
        inputs = "input" if count == 1 else "inputs"
        self.emit(Notice(text=template.format(n=count, inputs=inputs), kind="restored"))
        return count
