"""A snapshot of the process table from /proc (Linux), for finding a command's processes.

Each process is named by its pid *and* its start time (clock ticks since boot, field 22
of /proc/<pid>/stat): a pid may be reused once its process is gone, the pair never is.
Without /proc (macOS, BSD) `scan()` returns None and callers fall back to process groups.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Iterable
from dataclasses import dataclass

_PROC = "/proc"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True, slots=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    # Clock ticks after boot: with the pid, it names the process for good.
    start: int

    @property
    def alive(self) -> bool:
        """Running or sleeping; a zombie (dead, not yet reaped) is not alive."""
        return self.state not in ("Z", "X")

    @property
    def key(self) -> tuple[int, int]:
        return (self.pid, self.start)


Table = dict[int, Proc]


def available() -> bool:
    return os.path.exists(f"{_PROC}/self/stat")


def _read(path: str) -> bytes | None:
    """The whole file, or None when it cannot be read. Plain os calls: a Python file
    object costs more than the read itself here, and a scan opens one for every process
    (while Ctrl+C of several commands waits on their scans)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        parts = []
        while chunk := os.read(fd, 65536):
            parts.append(chunk)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_proc(pid: int) -> Proc | None:
    stat = _read(f"{_PROC}/{pid}/stat")
    if stat is None:
        return None
    # The command name (field 2) may hold spaces and ")", so parse after the last ")".
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    return Proc(
        pid=pid,
        ppid=int(fields[1]),
        pgid=int(fields[2]),
        sid=int(fields[3]),
        state=fields[0].decode("ascii", "replace"),
        start=int(fields[19]),
    )


class _SharedScan:
    """Scans asked for at once share one: each caller gets a scan that started after it
    asked (so it sees every signal it sent before), but callers that ask while one runs
    share the next. Stopping several commands at once (Ctrl+C of a tree of sub-agents)
    asks from several threads together, and separate scans fought over the GIL for tens
    of milliseconds."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._started = 0
        self._finished = 0
        self._running = False
        self._table: Table = {}
        # Callers waiting for a scan to end (for tests that need them all queued).
        self.waiting = 0

    def scan(self) -> Table:
        with self._changed:
            needed = self._started + 1
            self.waiting += 1
            self._changed.notify_all()
            # A scan running now may have started before this call: wait it out, then
            # run the next one, or take it from whoever ran it.
            self._changed.wait_for(lambda: self._finished >= needed or not self._running)
            self.waiting -= 1
            if self._finished >= needed:
                return dict(self._table)
            self._running = True
            self._started += 1
            mine = self._started
        table: Table = {}
        try:
            table = _scan_now()
        finally:
            with self._changed:
                self._running = False
                self._finished = mine
                self._table = table
                self._changed.notify_all()
        return dict(table)


def _scan_now() -> Table:
    table: Table = {}
    for name in os.listdir(_PROC):
        if name.isdigit():
            proc = read_proc(int(name))
            if proc is not None:
                table[proc.pid] = proc
    return table


_shared = _SharedScan()


def scan() -> Table | None:
    """Every process we can see, by pid; None without /proc."""
    if not available():
        return None
    return _shared.scan()


def children_of(table: Table) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    return children


def descendants(table: Table, roots: Iterable[int], children: dict[int, list[int]]) -> set[int]:
    """`roots` (those in the table) and everything below them."""
    found: set[int] = set()
    stack = [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found.add(pid)
        stack.extend(children.get(pid, ()))
    return found


def read_env(pid: int, names: Collection[str]) -> dict[str, str] | None:
    """Those of `names` set in the environment `pid` was started with; None when it
    cannot be read (gone, or another user's). A zombie's environment reads as empty."""
    environ = _read(f"{_PROC}/{pid}/environ")
    if environ is None:
        return None
    wanted = {name.encode() + b"=": name for name in names}
    found: dict[str, str] = {}
    for item in environ.split(b"\0"):
        head = item[: item.find(b"=") + 1]
        if head in wanted:
            found[wanted[head]] = item[len(head) :].decode("utf-8", "replace")
    return found


def read_cmdline(pid: int) -> str:
    """The process's arguments joined by spaces ("" for a zombie or a kernel thread)."""
    raw = _read(f"{_PROC}/{pid}/cmdline")
    if raw is None:
        return ""
    return " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)


def ticks_now() -> int | None:
    """Clock ticks since boot now, as start times count them; None without /proc."""
    try:
        with open(f"{_PROC}/uptime", "rb") as file:
            return int(float(file.read().split()[0]) * _TICKS)
    except (OSError, ValueError, IndexError):
        return None


def boot_time() -> float | None:
    """Seconds since the epoch at boot (for turning start ticks into a time)."""
    try:
        with open(f"{_PROC}/stat", "rb") as file:
            for line in file:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


def started_at(proc: Proc) -> float | None:
    """When `proc` started, in seconds since the epoch."""
    boot = boot_time()
    return None if boot is None else boot + proc.start / _TICKS
