"""One writer at a time per session file: an advisory lock beside it.

What it promises:

- Whoever writes a session (the TUI, print mode, RPC mode, the Python API, `ink serve`,
  all through `SessionWriter`) holds `<session>.lock`, next to `<session>.jsonl`, with
  `fcntl.flock(LOCK_EX | LOCK_NB)`. A second opener gets `SessionLocked` at once, whose
  message names the holder (front end and pid) and what to do; it never waits.
- The lock belongs to the open file, not to the process: a second open in the same
  process is refused too (two writers in one process interleave lines as badly as two
  processes would).
- The kernel lets go when the holder dies, however it dies: a `.lock` file left by a
  killed process never blocks anyone.
- `release()` removes the file. Removing a lock file is racy unless the taker checks,
  after locking, that the path still names the file it locked; `acquire` does so and
  tries again when it does not.
- Where the lock file cannot be made (a read-only folder) or flock is missing, no lock
  is taken and the session opens as before: refusing would keep the user from their
  session over a safeguard.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from pathlib import Path

from ink_tui.session.store_paths import SESSION_SUFFIX

try:
    import fcntl
except ImportError:  # not POSIX: None stands for the missing module (hence the ignore)
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

LOCK_SUFFIX = ".lock"
_ATTEMPTS = 5

# What this process calls itself in the lock file ("ink", "ink serve", ...).
_front_end = "ink"


def set_front_end(name: str) -> None:
    """Name this process's front end in the locks it takes (shown to a refused opener)."""
    global _front_end
    _front_end = name


class SessionLocked(OSError):
    """The session is open in another process (or another writer); `str()` says which."""

    def __init__(self, session_path: Path, holder: str) -> None:
        self.session_path = session_path
        self.holder = holder
        super().__init__(
            errno.EWOULDBLOCK,
            f"session {_session_id(session_path)} is open in another process ({holder}); "
            "close it there first, or start a new session",
        )

    def __str__(self) -> str:
        return str(self.args[1])


def lock_path(session_path: Path) -> Path:
    name = session_path.name
    stem = name[: -len(SESSION_SUFFIX)] if name.endswith(SESSION_SUFFIX) else name
    return session_path.with_name(stem + LOCK_SUFFIX)


class SessionLock:
    """A held lock; `release()` once (the writer's close does)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # Unlink while still holding it: a taker that opened the old file sees that the
        # path no longer names it and tries again.
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(fd)


def acquire(session_path: Path) -> SessionLock | None:
    """Lock `session_path` for writing. Raises `SessionLocked` when someone holds it;
    None when no lock can be taken here (see the module's last promise)."""
    if fcntl is None:
        return None
    path = lock_path(session_path)
    for _attempt in range(_ATTEMPTS):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as error:
            log.warning("cannot lock session %s (%s); opening it unlocked", session_path, error)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise SessionLocked(session_path, holder) from None
        except OSError as error:
            os.close(fd)
            log.warning("cannot lock session %s (%s); opening it unlocked", session_path, error)
            return None
        if _names_same_file(path, fd):
            _write_holder(fd)
            return SessionLock(path, fd)
        # The holder released (and removed) it between our open and our lock.
        os.close(fd)
    log.warning("cannot lock session %s (the lock file keeps changing)", session_path)
    return None


def _names_same_file(path: Path, fd: int) -> bool:
    try:
        on_disk = os.stat(path)
    except OSError:
        return False
    held = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (held.st_dev, held.st_ino)


def _write_holder(fd: int) -> None:
    # Never the command line: it may hold --api-key.
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{_front_end}, pid {os.getpid()}\n".encode(), 0)


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "another ink"


def _session_id(session_path: Path) -> str:
    from ink_tui.session.store_paths import session_id_from_name

    return session_id_from_name(session_path.name) or session_path.name


def check_unlocked(session_path: Path) -> None:
    """Raise `SessionLocked` if another writer holds `session_path` right now (a check
    for a friendly refusal up front; the writer's own `acquire` still decides)."""
    lock = acquire(session_path)
    if lock is not None:
        lock.release()
