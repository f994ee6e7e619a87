"""Running a shell command in a process group of its own, and stopping all it started.

Why a group: a command starts children (pipelines, `make`, test runners, `cmd &`).
Stopping only the shell would leave them running and holding the output pipe open. Each
command is started with `start_new_session=True`: the shell leads a new session and
process group whose id (pgid) is the shell's pid, and every descendant inherits that
group unless it moves itself out with setsid/setpgid. Those, and orphans of a double
fork, are found by jobs.py (every command's shell carries an `INK_JOB` tag of its
session's `JobTable` in its environment, and the `ink` command is a child subreaper);
the group is only the first net. A new session
also has no controlling terminal: a command can neither read the user's keys from
/dev/tty nor receive the terminal's Ctrl+C.

Stopping a command (`terminate_group`, on an interrupt or a timeout):

1. SIGTERM to the whole group (`os.killpg`) and to every other process of the command
   that jobs.py finds (so well-behaved programs can clean up).
2. Look again every 50 ms, for up to `grace` (2 s), until none of them is alive; a
   process forked meanwhile gets its SIGTERM on the next look.
3. SIGKILL to whatever is left, again on every look, for up to `settle`.

"Alive" excludes zombies (dead, not yet reaped): `killpg(pgid, 0)` also succeeds for a
zombie, so on Linux states are read from /proc. The shell is our child and asyncio reaps
it; members orphaned by the shell's death are adopted and reaped here (see orphans.py and
jobs.py), so once the group is stopped `os.killpg(pgid, 0)` raises ProcessLookupError.

A command that completes normally is not stopped: what it left running becomes a job
(jobs.py), stopped by the user (`/jobs kill`), when its session closes, or when ink
exits (job_exit.py).

Output: stdout and stderr share one pipe that this module creates, so the read end is
ours to close. Closing it stops the reading even when a process that escaped the group
keeps the write end open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ink_tui.tools import proc_table
from ink_tui.tools.jobs import JOB_VAR, JobTable, members_of
from ink_tui.tools.orphans import reap_finished_groups, reap_group, watch_group

SHELL = "/bin/bash"
TERM_GRACE = 2.0
KILL_SETTLE = 0.2


@dataclass(slots=True)
class GroupProcess:
    process: asyncio.subprocess.Process
    # stdout and stderr, merged.
    output: asyncio.StreamReader
    _transport: asyncio.ReadTransport

    @property
    def pgid(self) -> int:
        return self.process.pid

    def close_output(self) -> None:
        self._transport.close()


async def spawn_in_group(
    command: str, cwd: Path, env: Mapping[str, str] | None = None, *, jobs: JobTable
) -> GroupProcess:
    """Start `/bin/bash -c command` in `cwd` as the leader of a new process group, a
    command of `jobs` (its session's table).

    stdin is /dev/null (nothing can wait for input); stdout and stderr go to one pipe.
    """
    loop = asyncio.get_running_loop()
    reap_finished_groups()
    tag = jobs.new_tag()
    # The tag follows every process the command starts, through setsid and double forks;
    # it is the child's, never this process's environment.
    tagged = dict(os.environ if env is None else env)
    tagged[JOB_VAR] = tag
    since = proc_table.ticks_now()
    read_fd, write_fd = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            SHELL,
            "-c",
            command,
            cwd=cwd,
            env=tagged,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        # The child has its own copy; ours would keep the pipe from ever reaching EOF.
        os.close(write_fd)
    watch_group(process)
    jobs.track(process, command, tag, since)
    reader = asyncio.StreamReader()
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
    except BaseException:
        # Cancelled (or failed) before the caller holds the group: nothing the command
        # started may outlive the call.
        pipe.close()
        kill_group_now(process.pid, jobs)
        raise
    return GroupProcess(process, reader, transport)


def group_alive(pgid: int) -> bool:
    """Whether any member of the group is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    live = _live_members(pgid)
    return True if live is None else bool(live)


def _live_members(pgid: int) -> list[int] | None:
    """Pids of the group's non-zombie members from /proc; None without /proc."""
    if not os.path.exists("/proc/self/stat"):
        return None
    live: list[int] = []
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "stat"), "rb") as file:
                    stat = file.read()
            except OSError:
                continue
            # The command name (field 2) may hold spaces and ")", so parse after the last ")".
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                live.append(int(entry.name))
    return live


async def terminate_group(
    process: asyncio.subprocess.Process,
    jobs: JobTable,
    *,
    grace: float = TERM_GRACE,
    settle: float = KILL_SETTLE,
) -> None:
    """SIGTERM everything the command started, SIGKILL it after `grace` (see module doc)."""
    pgid = process.pid
    command = jobs.command_of(pgid)
    select = members_of([command.serial] if command is not None else [])
    await asyncio.to_thread(jobs.stop, select, grace=grace, settle=settle, groups=[pgid])
    # The shell's exit status must reach asyncio before orphans are reaped by group id.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), settle)
    reap_group(process)


def kill_group_now(pgid: int, jobs: JobTable) -> None:
    """SIGKILL everything the command started, without waiting, for cleanup paths that
    cannot await (cancellation)."""
    command = jobs.command_of(pgid)
    select = members_of([command.serial] if command is not None else [])
    jobs.stop(select, grace=0, settle=0, groups=[pgid])
