"""Why the session store cannot be written, said so a user can fix it.

The OS error alone names the deepest path it tried ("Not a directory:
'~/.local/share/ink/sessions/proj-3f9c2a7be0'"), which is not the culprit when a file sits
where a folder of the store should be. `describe_store_error` walks up to the first
path that exists and says what is wrong with it: a file instead of a folder, no
permission to write, a read-only file system.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


class SessionStoreError(OSError):
    """The session store cannot be written; `str()` names the path and the cause."""

    def __init__(self, target: Path, error: OSError, *, is_folder: bool = True) -> None:
        self.target = target
        self.cause = describe_store_error(target, error, is_folder=is_folder)
        super().__init__(error.errno, f"cannot save the session in {target}: {self.cause}")

    def __str__(self) -> str:
        # OSError's own str() would put "[Errno 20]" in front of the message.
        return str(self.args[1])


def describe_store_error(target: Path, error: OSError, *, is_folder: bool = True) -> str:
    """What is wrong on the way to `target` (a folder, or a file if not `is_folder`),
    naming the path that is wrong."""
    existing = _first_existing(target)
    should_be_folder = is_folder or existing != target
    if existing is not None and should_be_folder and not existing.is_dir():
        return f"{existing} is a file, not a folder"
    # The folder that refused: the nearest existing one on the way to what was created.
    failed = Path(error.filename) if error.filename else target
    where = _first_existing(failed) or failed
    if error.errno == errno.EROFS:
        return f"{where} is on a read-only file system"
    if error.errno in (errno.EACCES, errno.EPERM):
        return f"{where} is read-only for you (permission denied)"
    if error.errno == errno.ENOSPC:
        return f"the disk holding {where} is full"
    reason = error.strerror or str(error)
    return f"{where}: {reason}"


def _first_existing(path: Path) -> Path | None:
    """`path` or its nearest ancestor that exists (lexists: a dangling link counts)."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return None
