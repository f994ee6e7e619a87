"""Finding test processes in /proc by a unique marker argument (`sleep 300.52718364`).

Every way a command can leave a process behind, as a bash line that starts one `sleep`
whose only argument is the marker. A marker is a number, so `sleep` accepts it, and is
unique to one test, so /proc finds exactly that test's processes.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sys
import time

ESCAPE_FORMS: dict[str, str] = {
    "background": "sleep {m} &",
    "nohup": "nohup sleep {m} >/dev/null 2>&1 &",
    "subshell": "(sleep {m} &)",
    "disown": "sleep {m} & disown",
    "setsid": "setsid sleep {m} &",
    "double_fork": "bash -c 'sleep {m} &' &",
    # A process that leaves the session itself, then forks and exits: an orphan of
    # another session and no group of ours.
    "setsid_then_fork": (
        f"{sys.executable} -c "
        '\'import os; os.setsid(); os.fork() or os.execvp("sleep", ["sleep", "{m}"])\''
    ),
    # No INK_JOB tag, another session, and its parent gone.
    "env_cleared_setsid": "env -i /bin/bash -c 'setsid sleep {m} &'",
}


def new_marker() -> str:
    """A prefix: append one digit per process (`marker + "1"`)."""
    return f"300.{random.randrange(10**7, 10**8)}"


def all_forms(prefix: str) -> tuple[str, list[str]]:
    """Every escape form in one command, one line each, and the marker of each."""
    markers = [f"{prefix}{index}" for index in range(1, len(ESCAPE_FORMS) + 1)]
    lines = [form.format(m=m) for form, m in zip(ESCAPE_FORMS.values(), markers, strict=True)]
    return "\n".join(lines), markers


def _processes() -> list[tuple[int, list[str]]]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat = file.read()
            with open(f"/proc/{name}/cmdline", "rb") as file:
                argv = file.read().split(b"\0")
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 :][:1] in (b"Z", b"X"):
            continue
        found.append((int(name), [part.decode("utf-8", "replace") for part in argv if part]))
    return found


def alive(*markers: str) -> list[int]:
    """Pids of live (not zombie) processes with one of `markers` as an argument."""
    wanted = set(markers)
    return [pid for pid, argv in _processes() if wanted.intersection(argv)]


def wait_alive(markers: list[str], within: float = 10.0) -> None:
    """Until a process with each marker runs; fails the test if one never does."""
    deadline = time.monotonic() + within
    while True:
        missing = [m for m in markers if not alive(m)]
        if not missing:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"never started: {missing}")
        time.sleep(0.02)


def wait_gone(markers: list[str], within: float = 2.0) -> list[int]:
    """Pids still alive with any of `markers` after up to `within` seconds ([] if none)."""
    deadline = time.monotonic() + within
    while (left := alive(*markers)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def ended(pid: int, start: int | None = None) -> bool:
    """The process `pid` that started at `start` (clock ticks after boot, field 22 of
    /proc/<pid>/stat) has ended: it is gone, a zombie, or its pid is another's now.
    Without `start`, for a pid that cannot be reused meanwhile (a child, or an orphan
    of this subreaper, which stays a zombie until reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return True
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[0] in (b"Z", b"X") or (start is not None and int(fields[19]) != start)


def wait_ended(pid: int, start: int | None = None, within: float = 30.0) -> bool:
    """Until that process has ended (see `ended`); False if it still runs after `within`."""
    deadline = time.monotonic() + within
    while not ended(pid, start):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def kill_marked(prefix: str) -> None:
    """Cleanup: SIGKILL every process with `prefix` in an argument (shells included)."""
    for pid, argv in _processes():
        if any(prefix in part for part in argv):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
