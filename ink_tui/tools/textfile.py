"""Loading a whole text file for tools that rewrite it (edit, write)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.binary import binary_error, decode_text
from ink_tui.tools.path_target import PathChangedError, open_resolved
from ink_tui.tools.paths import not_found_error

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def changed_error(shown: str) -> ToolError:
    return ToolError(
        f"{shown}: a symlink is on the path where none was when it was resolved (it "
        "changed meanwhile, or it loops), so nothing was opened; check the path"
    )


def open_error(exc: OSError, path: Path, shown: str) -> ToolError:
    """Word an OSError from opening `path` for the model. Blocking: call from a thread."""
    if isinstance(exc, PathChangedError):
        return changed_error(shown)
    if isinstance(exc, FileNotFoundError):
        return not_found_error(path, shown)
    if isinstance(exc, IsADirectoryError):
        return ToolError(f"{shown} is a directory, not a file; use ls to list it")
    if isinstance(exc, PermissionError):
        return ToolError(f"cannot open {shown}: permission denied")
    return ToolError(f"cannot open {shown}: {exc.strerror or exc}")


def check_regular_file(path: Path, shown: str) -> None:
    """Refuse anything but a regular file before opening it. Blocking: call from a thread.

    Opening a FIFO would block the worker thread until a writer shows up, and a device
    such as /dev/zero never ends.
    """
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise open_error(exc, path, shown) from None
    if stat.S_ISDIR(mode):
        raise open_error(IsADirectoryError(str(path)), path, shown)
    if not stat.S_ISREG(mode):
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)")


def open_regular(path: Path, shown: str) -> int:
    """Open a resolved path (`PathTarget.real`) for reading, following no symlink, and
    only if it is a regular file. Blocking: call from a thread."""
    check_regular_file(path, shown)
    try:
        # Non-blocking: a FIFO swapped in after the check must not hold the thread.
        fd = open_resolved(path, os.O_RDONLY | _NONBLOCK)
    except OSError as exc:
        raise open_error(exc, path, shown) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)")
    return fd


def load_text(path: Path, shown: str, action: str) -> str:
    """Read a UTF-8 text file whole (a resolved path). Blocking: call from a thread."""
    fd = open_regular(path, shown)
    try:
        with os.fdopen(fd, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise open_error(exc, path, shown) from None
    text = decode_text(data)
    if text is None:
        raise binary_error(shown, action)
    return text
