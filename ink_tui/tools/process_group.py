"""Running a shell command in a process group of its own, and stopping the whole group.

Why a group: a command starts children (pipelines, `make`, test runners, `cmd &`).
Stopping only the shell would leave them running and holding the output pipe open. Each
command is started with `start_new_session=True`: the shell leads a new session and
process group whose id (pgid) is the shell's pid, and every descendant inherits that
group unless it moves itself out with setsid/setpgid (those escape; nothing short of a
cgroup can follow them). A new session also has no controlling terminal: a command can
neither read the user's keys from /dev/tty nor receive the terminal's Ctrl+C.

Stopping a group (`terminate_group`):

1. SIGTERM to the whole group (`os.killpg`), so well-behaved programs can clean up.
2. Wait up to `grace` (2 s) for every member to be gone.
3. SIGKILL to the group if anything is left (something ignored or trapped SIGTERM).
4. Wait briefly (`settle`) for the killed members to disappear.

"Gone" means no member is alive. `killpg(pgid, 0)` also succeeds while a member is a
zombie (dead, not yet reaped), so on Linux the members' states are read from /proc and
zombies do not count. The shell is our child and asyncio reaps it; members orphaned by
the shell's death are adopted and reaped here (see orphans.py), so once the group is
stopped `os.killpg(pgid, 0)` raises ProcessLookupError.

Output: stdout and stderr share one pipe that this module creates, so the read end is
ours to close. Closing it stops the reading even when a process that escaped the group
keeps the write end open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ink_tui.tools.orphans import (
    adopt_orphans,
    groups_in_flight,
    reap_finished_groups,
    reap_group,
    watch_group,
)

SHELL = "/bin/bash"
TERM_GRACE = 2.0
KILL_SETTLE = 0.2
_POLL = 0.05


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
    command: str, cwd: Path, env: Mapping[str, str] | None = None
) -> GroupProcess:
    """Start `/bin/bash -c command` in `cwd` as the leader of a new process group.

    stdin is /dev/null (nothing can wait for input); stdout and stderr go to one pipe.
    """
    loop = asyncio.get_running_loop()
    adopt_orphans()
    reap_finished_groups()
    read_fd, write_fd = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            SHELL,
            "-c",
            command,
            cwd=cwd,
            env=None if env is None else dict(env),
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
    reader = asyncio.StreamReader()
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return GroupProcess(process, reader, transport)


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


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
    *,
    grace: float = TERM_GRACE,
    settle: float = KILL_SETTLE,
) -> None:
    """SIGTERM the group, SIGKILL it after `grace` if anything is left (see module doc)."""
    pgid = process.pid
    signal_group(pgid, signal.SIGTERM)
    if not await _wait_gone(process, grace):
        signal_group(pgid, signal.SIGKILL)
        await _wait_gone(process, settle)
    # The shell's exit status must reach asyncio before orphans are reaped by group id.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), settle)
    reap_group(process)


def kill_group_now(pgid: int) -> None:
    """SIGKILL without waiting, for cleanup paths that cannot await (cancellation)."""
    signal_group(pgid, signal.SIGKILL)


async def _wait_gone(process: asyncio.subprocess.Process, within: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    pgid = process.pid
    while True:
        alive = await asyncio.to_thread(group_alive, pgid)
        # Reaped after the check: members that just died are zombies by now.
        reap_group(process)
        if not alive:
            return True
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        await asyncio.sleep(min(_POLL, remaining))


def kill_commands_in_flight() -> int:
    """SIGKILL the group of every command still running; for exiting at once (exit 130).

    Background jobs left by commands that already finished are not touched.
    """
    groups = groups_in_flight()
    for pgid in groups:
        kill_group_now(pgid)
    return len(groups)
