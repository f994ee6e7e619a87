"""Nothing a command started outlives ink: the process-wide guard and what it runs.

What is the session's own needs no guard: every session's `JobTable` (jobs.py) is
stopped by its controller's exit hook (/quit, a double Ctrl+C, even through `os._exit`)
and when the session closes (`AgentSession.aclose`). What needs the whole process is
here, in `guard_exit()`, which changes process-wide state and so is never called by the
library itself: the `ink` command calls it in its entry point (cli.py, before any front
end, `ink serve` included), and a program that embeds ink may opt in with
`ink_tui.api.install_process_guards()`. It

- makes the process a child subreaper (orphans.py), so that whatever a command started
  stays a descendant of the process however it escaped;
- puts `INK_OWNER` in the process's environment (jobs.mark_own_processes), so that what
  the process starts itself is never taken for a command's orphan;
- registers an `atexit` hook: print mode's end, stdin EOF, any normal interpreter exit,
  an uncaught exception stop what the commands of every live session left running;
- installs a SIGTERM and a SIGHUP (the terminal closed) handler that stops all of it,
  then lets the process die of the signal as it did before.

A handler is installed only over the default action, and only from the main thread: a
signal the process was told to ignore (`nohup ink`) or that someone else handles is left
alone. SIGKILL runs nothing; the processes then go to the next subreaper or init.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import sys
import threading
from types import FrameType

from ink_tui.tools import jobs
from ink_tui.tools.orphans import adopt_orphans

_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@functools.cache
def guard_exit() -> bool:
    """Become a subreaper and install the exit paths (once). True if now a subreaper."""
    subreaper = adopt_orphans()
    jobs.mark_own_processes(subreaper)
    atexit.register(_at_exit)
    if threading.current_thread() is threading.main_thread():
        for sig in _SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                if signal.getsignal(sig) == signal.SIG_DFL:
                    signal.signal(sig, _on_signal)
    return subreaper


def stop_every_session() -> int:
    """Stop what the commands of every live session left running (and what still runs)."""
    return sum(table.stop_everything() for table in jobs.every_table())


def _at_exit() -> None:
    left = [job for table in jobs.every_table() for job in table.scan_jobs()]
    stop_every_session()
    if left and sys.stderr is not None:
        names = ", ".join(job.argv[:40] or f"pid {job.pid}" for job in left[:3])
        more = f" and {len(left) - 3} more" if len(left) > 3 else ""
        count = f"{len(left)} background job{'s' if len(left) != 1 else ''}"
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"ink: stopped {count} left running by commands: {names}{more}\n")
            sys.stderr.flush()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    try:
        stop_every_session()
    finally:
        # Die of the signal, as ink did before this handler existed.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
