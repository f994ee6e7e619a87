"""Every process a command starts, found again wherever it went; and the background jobs.

The problem. A command runs in a process group of its own (see process_group.py), but a
process can leave that group and its parent behind: `setsid cmd &` makes a new session,
`nohup cmd &`, `(cmd &)`, `disown` and a double fork (`bash -c 'cmd &' &`) leave an
orphan once the shell exits. Killing the group misses the first; nothing short of this
module found the others, and all of them outlived ink.

Whose they are. The commands of one session and what they left are that session's
`JobTable` (the controller's `jobs`, given to its bash tool): two sessions in one process
(`ink serve`) each list and stop only their own. Nothing here is process-wide but the
weak set of live tables, which the exit paths of `ink` walk (job_exit.py).

The scheme, on Linux (each rule covers what the one before cannot):

1. Where to look: ink's descendants (walking /proc ppid links down from ink's pid). When
   the process is a *child subreaper* (orphans.adopt_orphans; the `ink` command is one,
   an embedding program only if it opts in, see job_exit.guard_exit), an orphan of any
   process below it is reparented to it, so everything a command ever started stays a
   descendant. Without it orphans go to init, so every process started since the
   table's oldest command is looked at too, and rules 2-4 find the command's there.
2. Each command's shell is started with `INK_JOB=<tag>` in its environment (never in
   ink's own), a tag unique to this session's table and this command. Children inherit
   it through fork and exec, so `/proc/<pid>/environ` names the command of any process
   that kept its environment, wherever it went.
3. While the shell runs, a process in its session or process group belongs to it (the
   shell's pid is both ids). This covers `env -i` children that stayed in the session,
   and zombies (whose environment can no longer be read). Once the shell is gone its
   pid may be reused, so the rule ends with it.
4. A process once found to belong to a command still does (remembered by pid *and*
   start time, so a reused pid is never mistaken for it).
5. Only once the exit guard is installed (the process is a subreaper and carries
   `INK_OWNER=<id>` in its environment, so that every process it starts itself carries
   the mark): an orphan that rules 2-4 do not place (it cleared its environment *and*
   left the session, e.g. `env -i bash -c 'setsid cmd &'`) is a child of ink in a
   session that is not ink's and without that mark. It goes to the latest command, of
   any session, that started before it.

Everything below a process that belongs to a command belongs to it too. "Alive" means
not a zombie; zombies that are ink's children (adopted orphans) are reaped here, never
the shells themselves, which asyncio reaps.

What happens to them:

- Interrupt or timeout of a running command: every process of the command gets SIGTERM,
  then SIGKILL after a grace (`JobTable.stop`, via process_group.terminate_group).
- A command that completed: what it left running (`python -m http.server &`) is not
  killed, it becomes a *job*: each process of it whose parent is not also one of its
  processes (the top of what is left) is listed, numbered in order of discovery
  (`scan_jobs`), and may be stopped with its children (`stop_jobs`).
- The session closes or exits (`stop_everything`), or the `ink` process exits (every
  path; see job_exit.py): everything still running of every command.

Limits: without /proc (macOS, BSD) only the process group is killed, as before. Processes
that left ink's tree through another program (`systemd-run`, `at`, a daemon started over
D-Bus or ssh) carry no tag of ours and are not found; without the subreaper neither are
orphans that cleared their environment and left the session. A SIGKILL of ink itself
runs no cleanup.

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

import ink_tui.tools.proc_table as proc_table
from ink_tui.tools.proc_table import Proc, Table

JOB_VAR = "INK_JOB"
# In the environment of a process that installed the exit guard, so everything it starts
# itself (not through a command) carries it and is never taken for a command's orphan
# (rule 5).
OWNER_VAR = "INK_OWNER"
# Which tool call is running a command (set by the front end's bus subscriber).
CALL_LABEL: ContextVar[str | None] = ContextVar("ink_call_label", default=None)

_POLL = 0.05

# One lock for every table: rule 5 looks at the commands of all of them.
_lock = threading.RLock()
_tables: weakref.WeakSet[JobTable] = weakref.WeakSet()
# Set by the exit guard: the value of OWNER_VAR it put in this process's environment,
# and whether the process became a subreaper.
_owner_mark: str | None = None
_subreaper = False


def mark_own_processes(subreaper: bool) -> str:
    """For the exit guard only: put `INK_OWNER` in this process's environment, so that
    what it starts itself is never taken for a command's orphan, and turn rule 5 on.
    `subreaper`: the process is one, so every orphan of a command is a descendant."""
    global _owner_mark, _subreaper
    with _lock:
        _subreaper = subreaper
        if _owner_mark is None:
            _owner_mark = f"{os.getpid()}.{secrets.token_hex(3)}"
            os.environ[OWNER_VAR] = _owner_mark
        return _owner_mark


def every_table() -> list[JobTable]:
    """The live tables of this process (every session's), oldest first."""
    with _lock:
        return sorted(_tables, key=lambda t: t.created)


@dataclass(eq=False, slots=True)
class Command:
    """One bash call: its shell and everything found to be started by it."""

    serial: int
    tag: str
    command: str
    call_id: str | None
    shell: asyncio.subprocess.Process
    # Start time of the shell in clock ticks (rules 1 and 5), or a tick before it was
    # started when it was gone before it could be read; None without /proc.
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


Selector = Callable[[Snapshot], set[int]]


class JobTable:
    """One session's commands and the jobs they left: found, numbered, stopped."""

    def __init__(self) -> None:
        # Unique to this table, so another session's (or a nested ink's) tags never match.
        self.id = f"{os.getpid()}.{secrets.token_hex(4)}"
        self.created = time.monotonic()
        self._serials = itertools.count(1)
        self._commands: dict[int, Command] = {}
        self._numbers: dict[tuple[int, int], int] = {}
        self._next_number = itertools.count(1)
        self._last_jobs: tuple[Job, ...] = ()
        self._listeners: list[weakref.WeakMethod[Callable[[list[Job]], None]]] = []
        with _lock:
            _tables.add(self)

    def new_tag(self) -> str:
        """A fresh value for `INK_JOB`, for the next command's environment."""
        return f"{self.id}.{next(self._serials)}"

    def track(
        self,
        process: asyncio.subprocess.Process,
        command: str,
        tag: str,
        since: int | None = None,
    ) -> Command:
        """Remember a command whose shell was started with `INK_JOB=tag`, after the clock
        tick `since` (`proc_table.ticks_now()` before it was started)."""
        proc = proc_table.read_proc(process.pid)
        # A shell that exits at once may be reaped before it can be read.
        floor = since - 1 if since is not None else None
        start = proc.start if proc is not None else floor
        entry = Command(
            serial=int(tag.rsplit(".", 1)[1]),
            tag=tag,
            command=command,
            call_id=CALL_LABEL.get(),
            shell=process,
            shell_start=start,
        )
        with _lock:
            self._commands[entry.serial] = entry
        return entry

    def command_of(self, shell_pid: int) -> Command | None:
        """The running command whose shell is `shell_pid`."""
        with _lock:
            for entry in self._commands.values():
                if entry.pgid == shell_pid and entry.running:
                    return entry
        return None

    def on_change(self, listener: Callable[[list[Job]], None]) -> None:
        """Call the bound method `listener` (from any thread) when the list of jobs changes.

        Held weakly: a front end that goes away is dropped without unsubscribing.
        """
        with _lock:
            self._listeners.append(weakref.WeakMethod(listener))

    def running_commands(self) -> list[Command]:
        with _lock:
            return [c for c in self._commands.values() if c.running]

    def finished_commands(self) -> list[Command]:
        with _lock:
            return [c for c in self._commands.values() if not c.running]

    # -- finding processes --------------------------------------------------------------

    def snapshot(self) -> Snapshot | None:
        """Which process belongs to which command, now (rules 1-5); reaps adopted zombies."""
        table = proc_table.scan()
        if table is None:
            return None
        with _lock:
            commands = dict(self._commands)
            members = _attribute(table, commands, self)
            self._remember(table, commands, members)
            _reap_adopted(table, commands, members)
        return Snapshot(table, proc_table.children_of(table), members, commands)

    def _remember(
        self, table: Table, commands: dict[int, Command], members: dict[int, set[int]]
    ) -> None:
        for serial, pids in members.items():
            entry = commands[serial]
            entry.known = {pid: table[pid].start for pid in pids}
            if not entry.running and not pids:
                # Nothing of it is left: forget it (its shell is reaped, it has no jobs).
                self._commands.pop(serial, None)

    # -- jobs ---------------------------------------------------------------------------

    def scan_jobs(self) -> list[Job]:
        """The processes completed commands left running, now; tells listeners of a change."""
        with _lock:
            ran = bool(self._commands)
        # A session that ran no command (or whose commands are all forgotten) has no jobs:
        # no reading of /proc, which `ink serve`'s exit did once for each of its sessions.
        snap = self.snapshot() if ran else None
        jobs = self._jobs_in(snap) if snap is not None else []
        with _lock:
            changed = tuple(jobs) != self._last_jobs
            self._last_jobs = tuple(jobs)
            listeners = [ref() for ref in self._listeners]
            self._listeners[:] = [
                ref for ref, fn in zip(self._listeners, listeners, strict=True) if fn
            ]
        if changed:
            for listener in listeners:
                if listener is not None:
                    listener(jobs)
        return jobs

    def _jobs_in(self, snap: Snapshot) -> list[Job]:
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
            for key in [key for key in self._numbers if key not in current]:
                del self._numbers[key]
            for entry, proc in found:
                number = self._numbers.get(proc.key)
                if number is None:
                    number = self._numbers[proc.key] = next(self._next_number)
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

    # -- stopping -----------------------------------------------------------------------

    def stop(
        self, select: Selector, *, grace: float, settle: float, groups: Collection[int] = ()
    ) -> int:
        """SIGTERM what `select` picks (again on every look, so late forks are caught), then
        SIGKILL after `grace`; return once none of it is alive or `grace + settle` has
        passed.

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
            snap = self.snapshot()
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

    def stop_jobs(self, jobs: Collection[Job], *, grace: float = 2.0, settle: float = 0.5) -> int:
        """Stop these jobs and their children (SIGTERM, SIGKILL after `grace`)."""
        count = self.stop(jobs_and_children(jobs), grace=grace, settle=settle)
        self.scan_jobs()
        return count

    def stop_everything(self, *, grace: float = 0.3, settle: float = 0.5) -> int:
        """For closing and exiting: SIGKILL running commands at once, then stop every job.

        A running command gets no SIGTERM grace (exiting must not wait on a command that
        ignores it); jobs get `grace` to exit cleanly. Returns once all of it is gone.
        """
        running = self.running_commands()
        finished = self.finished_commands()
        if not running and not finished:
            return 0
        count = self.stop(
            members_of([c.serial for c in running]),
            grace=0,
            settle=settle,
            groups=[c.pgid for c in running],
        )
        # Without /proc the groups are all there is; with it, an emptied group's id may be
        # reused, so only the processes found are signalled.
        groups = [] if proc_table.available() else [c.pgid for c in finished]
        count += self.stop(
            members_of([c.serial for c in finished]), grace=grace, settle=settle, groups=groups
        )
        return count


def _attribute(table: Table, commands: dict[int, Command], owner: JobTable) -> dict[int, set[int]]:
    me = os.getpid()
    my_sid = table[me].sid if me in table else os.getsid(0)
    children = proc_table.children_of(table)
    mine = proc_table.descendants(table, [me], children) - {me}
    # Rule 1 without a subreaper: orphans went to init, but they started after a command.
    starts = [c.shell_start for c in commands.values() if c.shell_start is not None]
    if starts and not _subreaper:
        oldest = min(starts)
        mine |= {pid for pid, proc in table.items() if proc.start >= oldest and pid != me}
    by_tag = {c.tag: c for c in commands.values()}
    newest_first = sorted(commands.values(), key=lambda c: c.serial, reverse=True)
    # Only while the shell runs is its pid surely still the session's (rule 3).
    by_session = {c.pgid: c for c in newest_first if c.running}
    roots: dict[int, set[int]] = {serial: set() for serial in commands}
    for pid in mine:
        proc = table[pid]
        env = proc_table.read_env(pid, (JOB_VAR, OWNER_VAR)) if proc.alive else None
        found = by_tag.get(env.get(JOB_VAR, "")) if env else None
        found = found or by_session.get(proc.sid) or by_session.get(proc.pgid)
        if found is None:
            found = next((c for c in newest_first if c.known.get(pid) == proc.start), None)
        if found is None and env is not None and _orphan_of_a_command(proc, env, me, my_sid):
            found = _latest_before(proc, owner, commands)
        if found is not None:
            roots[found.serial].add(pid)
    return {serial: proc_table.descendants(table, pids, children) for serial, pids in roots.items()}


def _orphan_of_a_command(proc: Proc, env: dict[str, str], me: int, my_sid: int) -> bool:
    """Rule 5: a child of ink, outside ink's session, without ink's own mark or a tag."""
    return (
        _owner_mark is not None
        and proc.ppid == me
        and proc.sid != my_sid
        and env.get(OWNER_VAR) != _owner_mark
        and not any(env.get(JOB_VAR, "").startswith(f"{t.id}.") for t in _tables)
    )


def _latest_before(proc: Proc, owner: JobTable, commands: dict[int, Command]) -> Command | None:
    """Rule 5's command: the latest of any table's that started before `proc`, if ours."""
    best: tuple[int, JobTable, Command] | None = None
    for table in _tables:
        mine = commands if table is owner else table._commands
        for entry in mine.values():
            if entry.started_before(proc) and entry.shell_start is not None:
                key = entry.shell_start
                if best is None or key > best[0] or (key == best[0] and table is owner):
                    best = (key, table, entry)
    return best[2] if best is not None and best[1] is owner else None


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


def jobs_and_children(jobs: Collection[Job]) -> Selector:
    """The given jobs (by pid and start time) and everything of their command below them."""
    keys = {(job.pid, job.start) for job in jobs}

    def select(snap: Snapshot) -> set[int]:
        tops = [pid for pid in snap.table if snap.table[pid].key in keys]
        below = proc_table.descendants(snap.table, tops, snap.children)
        every = set().union(*snap.members.values()) if snap.members else set()
        return below & every

    return select
