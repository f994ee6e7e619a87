"""Background jobs for front ends: the count on the bus, the list, and stopping them.

ink_tui/tools/jobs.py finds the processes a command left running; this is what a front
end talks to:

- `JobsWatcher`, subscribed to a controller's bus (by assemble_controller) with the
  controller's own `JobTable`, tells the tool layer which call starts a command (the
  call a job is listed under), looks for jobs when a bash call ends and then once a
  second while any are left (they may end on their own), and publishes `JobsUpdate`, the
  whole list of this session's jobs, whenever it changes. A front end only subscribes;
  it never polls.
- `list_jobs(table)` and `stop_jobs(table, argument)` back a `/jobs` command. Looking at
  /proc and waiting for processes to stop happen on a thread, never on the caller's
  event loop.

Jobs are not stopped when their command completes (a server the user asked for should
keep serving); they are stopped on request, when their session closes or exits, or when
ink exits (tools/job_exit.py).
"""

from __future__ import annotations

import asyncio
import contextlib

from ink_tui.control.bus import EventBus
from ink_tui.core.events import Event, JobsUpdate, JobView, StateChange, ToolEnd, ToolStart
from ink_tui.tools import jobs as found

POLL_S = 1.0
NO_JOBS_TO_STOP = "No background jobs are running."


def view(job: found.Job) -> JobView:
    return JobView(
        number=job.number,
        pid=job.pid,
        argv=job.argv,
        command=job.command,
        call_id=job.call_id,
        started=job.started,
    )


class JobsWatcher:
    """`bus.subscribe(JobsWatcher(bus, table))`: publishes `JobsUpdate` when the jobs of
    `table` (the session's) change. The controller holds it as `jobs`."""

    def __init__(self, bus: EventBus, table: found.JobTable) -> None:
        self._bus = bus
        self.table = table
        self._loop: asyncio.AbstractEventLoop | None = None
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
        self._poller: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._closed = False
        table.on_change(self._changed)

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolStart) and event.call.name == "bash":
            # Set in the run's own context: the tool's task, created next, inherits it.
            found.CALL_LABEL.set(event.call.id)
        elif isinstance(event, ToolEnd) and event.call.name == "bash":
            self.refresh()
        elif isinstance(event, StateChange) and event.state == "exited":
            self._closed = True
            if self._poller is not None:
                self._poller.cancel()

    def refresh(self) -> None:
        """Look for jobs now, and keep looking while there are any. On the event loop."""
        if self._closed:
            return
        self._loop = asyncio.get_running_loop()
        if self._poller is None or self._poller.done():
            self._poller = self._loop.create_task(self._poll())
        else:
            self._wake.set()

    async def _poll(self) -> None:
        while not self._closed:
            self._wake.clear()
            left = await asyncio.to_thread(self.table.scan_jobs)
            if not left:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_S)

    async def aclose(self) -> None:
        """The session closes: stop looking, then stop what its commands left running
        (only its own: other sessions of the process keep theirs)."""
        self._closed = True
        poller, self._poller = self._poller, None
        if poller is not None and not poller.done():
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
        await asyncio.to_thread(self.table.stop_everything)

    def _changed(self, jobs: list[found.Job]) -> None:
        """From tools/jobs.py, on any thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        views = [view(job) for job in jobs]
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self._bus.publish, JobsUpdate(jobs=views))


async def list_jobs(table: found.JobTable) -> list[JobView]:
    """The session's jobs now (a fresh look, so one that just ended is not listed)."""
    return [view(job) for job in await asyncio.to_thread(table.scan_jobs)]


def pick(jobs: list[found.Job], argument: str) -> list[found.Job] | str:
    """The jobs `argument` names: nothing is all of them; each word is a job number
    (`2`, `#2`, `%2`) or a pid. A string says what did not match."""
    words = argument.replace(",", " ").split()
    if not words:
        return list(jobs)
    by_number = {job.number: job for job in jobs}
    by_pid = {job.pid: job for job in jobs}
    chosen: list[found.Job] = []
    for word in words:
        digits = word.lstrip("#%")
        if not digits.isdigit():
            return f"{word!r} is not a job number or a pid."
        value = int(digits)
        # A bare number is a job number first: those are small, pids rarely are.
        job = by_number.get(value) if word[0] in "#%" else by_number.get(value, by_pid.get(value))
        if job is None:
            return f"There is no job {word}; /jobs lists them."
        if job not in chosen:
            chosen.append(job)
    return chosen


async def stop_jobs(table: found.JobTable, argument: str = "") -> str:
    """Stop the session's jobs `argument` names (see `pick`) and their children; say
    what happened."""
    current = await asyncio.to_thread(table.scan_jobs)
    if not current:
        return NO_JOBS_TO_STOP
    chosen = pick(current, argument)
    if isinstance(chosen, str):
        return chosen
    await asyncio.to_thread(table.stop_jobs, chosen)
    names = ", ".join(f"#{job.number} {job.argv or f'pid {job.pid}'}" for job in chosen)
    return f"Stopped {len(chosen)} job{'s' if len(chosen) != 1 else ''}: {names}."
