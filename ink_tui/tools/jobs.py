"""Every process a command starts, found again wherever it went; and the background jobs.

The problem. A command runs in a process group of its own (see process_group.py), but a
process can leave that group and its parent behind: `setsid cmd &` makes a new session,
`nohup cmd &`, `(cmd &)`, `disown` and a double fork (`bash -c 'cmd &' &`) leave an
orphan once the shell exits. Killing the group misses the first; nothing short of this
module found the others, and all of them outlived ink.

The scheme, on Linux (each rule covers what the one before cannot):

1. ink is a *child subreaper* (orphans.adopt_orphans, set where the controller is
   assembled): an orphan of any process below ink is reparented to ink, not to init.
   So every process a command ever started stays among ink's descendants, found by
   walking /proc (ppid links) down from ink's pid.
2. Each command's shell is started with `INK_JOB=<tag>` in its environment, a tag unique
   to this ink process and this command. Children inherit it through fork and exec, so
   `/proc/<pid>/environ` names the command of any descendant that kept its environment.
3. While the shell runs, a process in its session or process group belongs to it (the
   shell's pid is both ids). This covers `env -i` children that stayed in the session,
   and zombies (whose environment can no longer be read). Once the shell is gone its
   pid may be reused, so the rule ends with it.
4. A process once found to belong to a command still does (remembered by pid *and*
   start time, so a reused pid is never mistaken for it).
5. An orphan that rules 2-4 do not place (it cleared its environment *and* left the
   session, e.g. `env -i bash -c 'setsid cmd &'`) is a child of ink in a session that
   is not ink's and without `INK_OWNER=<this ink>`, which ink puts in its own
   environment so that every process ink starts itself (a grep worker in a session of
   its own) carries it. It goes to the latest command that started before it. A process
   ink starts itself must therefore inherit ink's environment.

Everything below a process that belongs to a command belongs to it too. "Alive" means
not a zombie; zombies that are ink's children (adopted orphans) are reaped here, never
the shells themselves, which asyncio reaps.

What happens to them:

- Interrupt or timeout of a running command: every process of the command gets SIGTERM,
  then SIGKILL after a grace (`stop`, via process_group.terminate_group).
- A command that completed: what it left running (`python -m http.server &`) is not
  killed, it becomes a *job*: each process of it whose parent is not also one of its
  processes (the top of what is left) is listed, numbered in order of discovery
  (`scan_jobs`), and may be stopped with its children (`stop_jobs`).
- ink exits (every path; see job_exit.py): everything still running of every command.

Limits: without /proc (macOS, BSD) only the process group is killed, as before. Processes
that left ink's tree through another program (`systemd-run`, `at`, a daemon started over
D-Bus or ssh) are not ink's descendants and are not found. A SIGKILL of ink itself runs
no cleanup.

The tool call a command belongs to: the front end's bus subscriber sets `CALL_LABEL` when
a bash call starts (control/jobs.py); the tool's task is created after that and inherits
the value, so `track` reads it without the tool knowing any call ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import signal
import threading
import time
import weakref
from collections.abc import Callable, Collection
from contextvars import ContextVar
from dataclasses import dataclass, field

from ink_tui.tools import proc_table
from ink_tui.tools.proc_table import Proc, Table

JOB_VAR = "INK_JOB"
# In ink's own environment, so everything ink starts itself (not through a command)
# carries it and is never taken for a command's orphan (rule 5).
OWNER_VAR = "INK_OWNER"
# Which tool call is running a command (set by the front end's bus subscriber).
CALL_LABEL: ContextVar[str | None] = ContextVar("ink_call_label", default=None)

_POLL = 0.05
# Unique to this ink process, so a nested ink's tags never match ours.
_INK_ID = f"{os.getpid()}.{secrets.token_hex(3)}"
_serials = itertools.count(1)
os.environ[OWNER_VAR] = _INK_ID


@dataclass(eq=False, slots=True)
class Command:
    """One bash call: its shell and everything found to be started by it."""

    serial: int
    tag: str
    command: str
    call_id: str | None
    shell: asyncio.subprocess.Process
    # Start time of the shell in clock ticks (rule 5); None without /proc.
    shell_start: int | None
    # Processes found to belong to it, pid -> start ticks (rule 4).
    known: dict[int, int] = field(default_factory=dict)

    @property
    def pgid(self) -> int:
        return self.shell.pid

    @property
    def running(self) -> bool:
        return self.shell.returncode is None

    def started_before(self, proc: Proc) -> bool:
        return self.shell_start is not None and self.shell_start <= proc.start


@dataclass(frozen=True, slots=True)
class Job:
    """A process a completed command left running (the top of what it left)."""

    number: int
    pid: int
    start: int
    argv: str
    command: str
    call_id: str | None
    started: float | None


@dataclass(slots=True)
class Snapshot:
    table: Table
    children: dict[int, list[int]]
    # Command serial -> its processes (alive or zombie) in `table`.
    members: dict[int, set[int]]
    commands: dict[int, Command]

    def alive(self, pids: Collection[int]) -> list[Proc]:
        return [self.table[pid] for pid in pids if pid in self.table and self.table[pid].alive]


_lock = threading.RLock()
_commands: dict[int, Command] = {}
_numbers: dict[tuple[int, int], int] = {}
_next_number = itertools.count(1)
_last_jobs: tuple[Job, ...] = ()
_listeners: list[weakref.WeakMethod[Callable[[list[Job]], None]]] = []


def new_tag() -> str:
    """A fresh value for `INK_JOB`, for the next command's environment."""
    return f"{_INK_ID}.{next(_serials)}"


def track(process: asyncio.subprocess.Process, command: str, tag: str) -> Command:
    """Remember a command whose shell was started with `INK_JOB=tag`."""
    proc = proc_table.read_proc(process.pid)
    entry = Command(
        serial=int(tag.rsplit(".", 1)[1]),
        tag=tag,
        command=command,
        call_id=CALL_LABEL.get(),
        shell=process,
        shell_start=proc.start if proc is not None else None,
    )
    with _lock:
        _commands[entry.serial] = entry
    return entry


def command_of(shell_pid: int) -> Command | None:
    """The running command whose shell is `shell_pid`."""
    with _lock:
        for entry in _commands.values():
            if entry.pgid == shell_pid and entry.running:
                return entry
    return None


def on_change(listener: Callable[[list[Job]], None]) -> None:
    """Call the bound method `listener` (from any thread) when the list of jobs changes.

    Held weakly: a front end that goes away is dropped without unsubscribing.
    """
    with _lock:
        _listeners.append(weakref.WeakMethod(listener))  # type: ignore[arg-type]


# -- finding processes ------------------------------------------------------------------


def snapshot() -> Snapshot | None:
    """Which process belongs to which command, now (rules 1-5); reaps adopted zombies."""
    table = proc_table.scan()
    if table is None:
        return None
    with _lock:
        commands = dict(_commands)
        members = _attribute(table, commands)
        _remember(table, commands, members)
        _reap_adopted(table, commands, members)
    return Snapshot(table, proc_table.children_of(table), members, commands)


def _attribute(table: Table, commands: dict[int, Command]) -> dict[int, set[int]]:
    me = os.getpid()
    my_sid = table[me].sid if me in table else os.getsid(0)
    children = proc_table.children_of(table)
    mine = proc_table.descendants(table, [me], children) - {me}
    by_tag = {c.tag: c for c in commands.values()}
    newest_first = sorted(commands.values(), key=lambda c: c.serial, reverse=True)
    # Only while the shell runs is its pid surely still the session's (rule 3).
    by_session = {c.pgid: c for c in newest_first if c.running}
    roots: dict[int, set[int]] = {serial: set() for serial in commands}
    for pid in mine:
        proc = table[pid]
        env = proc_table.read_env(pid, (JOB_VAR, OWNER_VAR)) if proc.alive else None
        owner = by_tag.get(env.get(JOB_VAR, "")) if env else None
        owner = owner or by_session.get(proc.sid) or by_session.get(proc.pgid)
        if owner is None:
            owner = next((c for c in newest_first if c.known.get(pid) == proc.start), None)
        if owner is None and env is not None and _orphan_of_a_command(proc, env, me, my_sid):
            owner = next((c for c in newest_first if c.started_before(proc)), None)
        if owner is not None:
            roots[owner.serial].add(pid)
    return {serial: proc_table.descendants(table, pids, children) for serial, pids in roots.items()}


def _orphan_of_a_command(proc: Proc, env: dict[str, str], me: int, my_sid: int) -> bool:
    """Rule 5: a child of ink, outside ink's session, without ink's own mark."""
    return proc.ppid == me and proc.sid != my_sid and env.get(OWNER_VAR) != _INK_ID


def _remember(table: Table, commands: dict[int, Command], members: dict[int, set[int]]) -> None:
    for serial, pids in members.items():
        entry = commands[serial]
        entry.known = {pid: table[pid].start for pid in pids}
        if not entry.running and not pids:
            # Nothing of it is left: forget it (its shell is reaped, it has no jobs).
            _commands.pop(serial, None)


def _reap_adopted(table: Table, commands: dict[int, Command], members: dict[int, set[int]]) -> None:
    """Reap dead orphans reparented to ink; never a shell (asyncio waits for those)."""
    me = os.getpid()
    shells = {c.pgid for c in commands.values()}
    for pids in members.values():
        for pid in pids:
            proc = table[pid]
            if proc.ppid == me and not proc.alive and pid not in shells:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)


# -- jobs -----------------------------------------------------------------------------


def scan_jobs() -> list[Job]:
    """The processes completed commands left running, now; tells listeners of a change."""
    global _last_jobs
    snap = snapshot()
    jobs = _jobs_in(snap) if snap is not None else []
    with _lock:
        changed = tuple(jobs) != _last_jobs
        _last_jobs = tuple(jobs)
        listeners = [ref() for ref in _listeners]
        _listeners[:] = [ref for ref, fn in zip(_listeners, listeners, strict=True) if fn]
    if changed:
        for listener in listeners:
            if listener is not None:
                listener(jobs)
    return jobs


def last_jobs() -> list[Job]:
    """The jobs as of the last scan, without scanning."""
    with _lock:
        return list(_last_jobs)


def _jobs_in(snap: Snapshot) -> list[Job]:
    found: list[tuple[Command, Proc]] = []
    for serial, pids in snap.members.items():
        entry = snap.commands[serial]
        if entry.running:
            continue
        alive = {proc.pid for proc in snap.alive(pids)}
        for pid in alive:
            proc = snap.table[pid]
            if proc.ppid not in alive:
                found.append((entry, proc))
    found.sort(key=lambda item: (item[0].serial, item[1].start, item[1].pid))
    jobs = []
    with _lock:
        # A number lives as long as its process.
        current = {proc.key for _, proc in found}
        for key in [key for key in _numbers if key not in current]:
            del _numbers[key]
        for entry, proc in found:
            number = _numbers.get(proc.key)
            if number is None:
                number = _numbers[proc.key] = next(_next_number)
            jobs.append(
                Job(
                    number=number,
                    pid=proc.pid,
                    start=proc.start,
                    argv=proc_table.read_cmdline(proc.pid),
                    command=entry.command,
                    call_id=entry.call_id,
                    started=proc_table.started_at(proc),
                )
            )
    return jobs


# -- stopping -------------------------------------------------------------------------

Selector = Callable[[Snapshot], set[int]]


def stop(select: Selector, *, grace: float, settle: float, groups: Collection[int] = ()) -> int:
    """SIGTERM what `select` picks (again on every look, so late forks are caught), then
    SIGKILL after `grace`; return once none of it is alive or `grace + settle` has passed.

    `groups` are also signalled with killpg: the only way without /proc. Returns how
    many processes were signalled.
    """
    started = time.monotonic()
    termed: set[tuple[int, int]] = set()
    group_signal: signal.Signals | None = None
    while True:
        elapsed = time.monotonic() - started
        sig = signal.SIGTERM if elapsed < grace else signal.SIGKILL
        if sig != group_signal:
            group_signal = sig
            for pgid in groups:
                _signal_group(pgid, sig)
        snap = snapshot()
        if snap is None:
            # No /proc: the groups are all there is to watch.
            left = [pgid for pgid in groups if _group_exists(pgid)]
            if not left or elapsed >= grace + settle:
                return len(left)
            if sig == signal.SIGKILL:
                group_signal = None
            time.sleep(_POLL)
            continue
        targets = snap.alive(select(snap))
        if not targets:
            return len(termed)
        for proc in targets:
            if sig == signal.SIGKILL or proc.key not in termed:
                termed.add(proc.key)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(proc.pid, sig)
        if elapsed >= grace + settle:
            return len(termed)
        time.sleep(_POLL)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def members_of(serials: Collection[int]) -> Selector:
    """Every process of these commands."""
    return lambda snap: set().union(*(snap.members.get(s, set()) for s in serials))


def running_commands() -> list[Command]:
    with _lock:
        return [c for c in _commands.values() if c.running]


def finished_commands() -> list[Command]:
    with _lock:
        return [c for c in _commands.values() if not c.running]


def jobs_and_children(jobs: Collection[Job]) -> Selector:
    """The given jobs (by pid and start time) and everything of their command below them."""
    keys = {(job.pid, job.start) for job in jobs}

    def select(snap: Snapshot) -> set[int]:
        tops = [pid for pid in snap.table if snap.table[pid].key in keys]
        below = proc_table.descendants(snap.table, tops, snap.children)
        every = set().union(*snap.members.values()) if snap.members else set()
        return below & every

    return select


def stop_jobs(jobs: Collection[Job], *, grace: float = 2.0, settle: float = 0.5) -> int:
    """Stop these jobs and their children (SIGTERM, SIGKILL after `grace`)."""
    count = stop(jobs_and_children(jobs), grace=grace, settle=settle)
    scan_jobs()
    return count


def stop_everything(*, grace: float = 0.3, settle: float = 0.5) -> int:
    """For exiting: SIGKILL running commands at once, then stop every job.

    A running command gets no SIGTERM grace (exiting must not wait on a command that
    ignores it); jobs get `grace` to exit cleanly. Returns once all of it is gone.
    """
    running = running_commands()
    finished = finished_commands()
    if not running and not finished:
        return 0
    count = stop(
        members_of([c.serial for c in running]),
        grace=0,
        settle=settle,
        groups=[c.pgid for c in running],
    )
    # Without /proc the groups are all there is; with it, an emptied group's id may be
    # reused, so only the processes found are signalled.
    groups = [] if proc_table.available() else [c.pgid for c in finished]
    count += stop(
        members_of([c.serial for c in finished]), grace=grace, settle=settle, groups=groups
    )
    return count
