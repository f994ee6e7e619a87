"""Adopting and reaping the orphaned members of the process groups we start.

When a command's shell exits before its children, the kernel reparents them to init, or
to the nearest ancestor that declared itself a "child subreaper". The `ink` command
declares itself one (`adopt_orphans`) in its entry point, before any command can run
(job_exit.guard_exit; a program that embeds ink does so only if it opts in, since the bit
belongs to the whole process), for two reasons:

- every process a command starts stays ink's descendant, however it escaped its group
  (setsid, nohup, a double fork), so jobs.py can find it and it never outlives ink;
- some containers run a PID 1 that never reaps, so a dead orphan would stay a zombie for
  ever, and a zombie still counts as a member for `os.killpg(pgid, 0)`: the group would
  look alive after it was killed. ink reaps the dead members of its groups itself
  (`reap_group`, `reap_finished_groups`; jobs.py reaps adopted orphans outside them).

Reaping is by group, `waitpid(-pgid)`, and only once asyncio has reaped the group's shell
(its leader), so the shell's exit status always reaches asyncio. Other children of this
process are never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import sys

_PR_SET_CHILD_SUBREAPER = 36

# Groups whose members may still need reaping, by pgid; dropped once the group is gone.
_groups: dict[int, asyncio.subprocess.Process] = {}


@functools.cache
def adopt_orphans() -> bool:
    """Make this process a child subreaper (Linux only). True if it now is one."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def watch_group(process: asyncio.subprocess.Process) -> None:
    """Remember a group (led by `process`) so its orphans get reaped later."""
    _groups[process.pid] = process


def reap_group(process: asyncio.subprocess.Process) -> None:
    """Reap the group's dead members that are our children, once its leader is reaped."""
    if process.returncode is None:
        return
    pgid = process.pid
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def reap_finished_groups() -> None:
    """Reap what is left of earlier groups (background jobs that have exited since)."""
    for pgid, process in list(_groups.items()):
        reap_group(process)
        if process.returncode is None:
            continue
        with contextlib.suppress(PermissionError):
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                del _groups[pgid]
