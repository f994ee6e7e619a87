"""Where a tool's path argument points, and how a path is shown back to the model."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from ink_tui.core.tool_api import ToolError


def workspace_root(workspace: Path) -> Path:
    return Path(os.path.normpath(workspace.absolute()))


def resolve_path(workspace: Path, raw: str) -> Path:
    """Resolve a path argument: relative to the workspace; absolute and `~` paths work too.

    Only normalised lexically (no symlink resolution), which gets another file than the
    file system when a `..` follows a symlink: tools that open what the model names
    (read, write, edit, ls) and the approval gate use `path_target.path_target` instead.
    """
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = workspace_root(workspace) / path
    return Path(os.path.normpath(path))


def display_path(workspace: Path, path: Path) -> str:
    """Workspace-relative POSIX form when inside the workspace, else the absolute path."""
    try:
        relative = path.relative_to(workspace_root(workspace))
    except ValueError:
        return str(path)
    return relative.as_posix() if relative.parts else "."


def not_found_error(path: Path, shown: str) -> ToolError:
    """A "no such file" error that suggests near names from the same directory.

    Blocking (lists the parent directory): call it from a worker thread.
    """
    parent = path.parent
    if not parent.is_dir():
        return ToolError(f"{shown}: no such file or directory (its directory does not exist)")
    try:
        names = os.listdir(parent)
    except OSError:
        names = []
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    message = f"{shown}: no such file or directory"
    if close:
        prefix = shown[: len(shown) - len(path.name)]
        message += "; did you mean " + ", ".join(prefix + name for name in close) + "?"
    return ToolError(message)
