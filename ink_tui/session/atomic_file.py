"""Replacing a small file so that a crash leaves either the old or the new version.

Write a temporary file in the same folder, fsync it, then `os.replace` it over the
target (atomic on POSIX and Windows when both are on one file system). Readers never
see a half-written file, whatever moment the process is killed at.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` durably; creates the parent folders as needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as temp:
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    fsync_dir(path.parent)


def remove_file(path: Path) -> None:
    """Delete `path` if it exists, durably (a crash must not bring it back)."""
    try:
        path.unlink()
    except FileNotFoundError:
        return
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Make a rename or new file in `folder` durable.

    Best effort: some platforms (Windows) and file systems cannot open a folder for
    fsync, and the data itself is already safe at this point.
    """
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
