"""RPC `bash`: run one `!` line and answer with what that line, and nothing else, did.

A `!` line is a run of its own (`run_start` kind "shell"), and once it ends the session
goes straight on to whatever was queued meanwhile, in the same busy stretch. So the
answer is taken from the events of that one run (its run id), and given when that run
ends, not when the session settles: the output of a queued line or of a model's bash
call never lands in another command's answer.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ink_tui.core.events import Event, RunEnd, RunStart, ToolEnd

if TYPE_CHECKING:
    from ink_tui.api.session import AgentSession


class _ShellRunWatch:
    """Follows the first run that starts after it is subscribed: the one `start` began
    (the session was idle, so nothing else can start before it)."""

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.end: ToolEnd | None = None
        self.ended: asyncio.Future[RunEnd] = asyncio.get_running_loop().create_future()

    def __call__(self, event: Event) -> None:
        if self.run_id is None:
            if isinstance(event, RunStart):
                self.run_id = event.run_id
            return
        if event.run_id != self.run_id:
            return
        if isinstance(event, ToolEnd):
            self.end = event
        elif isinstance(event, RunEnd) and not self.ended.done():
            self.ended.set_result(event)


async def run_bash_line(session: AgentSession, line: str) -> dict[str, Any]:
    """Run `line` (with its `!`) on an idle `session`; its output, exit code and how its
    run stopped. Raises `RuntimeError` when the session is closed."""
    watch = _ShellRunWatch()
    unsubscribe = session.controller.bus.subscribe(watch)
    try:
        settled = session.start(line)
        # The run's end, or the session's settling when the run never got to end (the
        # session exited under it).
        waits: set[asyncio.Future[Any]] = {watch.ended, settled}
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        unsubscribe()
    stop_reason: str
    if watch.ended.done():
        ended = watch.ended.result()
        stop_reason = ended.stop_reason or "failed"
        error = ended.error
    else:
        watch.ended.cancel()
        result = settled.result()
        stop_reason, error = result.stop_reason, result.error
    end = watch.end
    data: dict[str, Any] = {
        "output": end.message.content if end is not None else "",
        "is_error": end.result.is_error if end is not None else True,
        "exit_code": end.result.details.get("exit_code") if end is not None else None,
        "stop_reason": stop_reason,
    }
    if error is not None:
        data["error"] = error
    return data
