"""Nothing a command started outlives ink: the exit paths and what each one runs.

`guard_exit()` is called where the controller is assembled, for every front end, before
any command can run. It makes ink a child subreaper (orphans.py) and arranges that every
way out stops what commands left running (jobs.py `stop_everything`):

- /quit, a double Ctrl+C idle or while running (exit 130, even through `os._exit`):
  the controller's exit hooks (`exit_hook`).
- print mode's end, stdin EOF, any normal interpreter exit, an uncaught exception:
  `atexit`.
- SIGTERM, SIGHUP (the terminal closed): a handler stops everything, then ink dies of
  the signal as it did before.

A handler is installed only over the default action: a signal ink was told to ignore
(`nohup ink`) or that someone else handles is left alone. SIGKILL runs nothing; the
processes then go to the next subreaper or init.
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
    atexit.register(_at_exit)
    if threading.current_thread() is threading.main_thread():
        for sig in _SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                if signal.getsignal(sig) == signal.SIG_DFL:
                    signal.signal(sig, _on_signal)
    return subreaper


def exit_hook() -> None:
    """For `RunController.exit_hooks`: the app is leaving, maybe through `os._exit`."""
    jobs.stop_everything()


def _at_exit() -> None:
    left = jobs.scan_jobs()
    jobs.stop_everything()
    if left and sys.stderr is not None:
        names = ", ".join(job.argv[:40] or f"pid {job.pid}" for job in left[:3])
        more = f" and {len(left) - 3} more" if len(left) > 3 else ""
        count = f"{len(left)} background job{'s' if len(left) != 1 else ''}"
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"ink: stopped {count} left running by commands: {names}{more}\n")
            sys.stderr.flush()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    try:
        jobs.stop_everything()
    finally:
        # Die of the signal, as ink did before this handler existed.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
