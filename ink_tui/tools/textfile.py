"""Loading a whole text file for tools that rewrite it (edit, write)."""

from __future__ import annotations

import stat
from pathlib import Path

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.binary import binary_error, decode_text
from ink_tui.tools.paths import not_found_error


def open_error(exc: OSError, path: Path, shown: str) -> ToolError:
    """Word an OSError from opening `path` for the model. Blocking: call from a thread."""
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


def load_text(path: Path, shown: str, action: str) -> str:
    """Read a UTF-8 text file whole. Blocking: call from a thread."""
    check_regular_file(path, shown)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise open_error(exc, path, shown) from None
    text = decode_text(data)
    if text is None:
        raise binary_error(shown, action)
    return text
