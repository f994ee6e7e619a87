"""The `write` tool: create or overwrite a file with the given content."""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any

from ink_tui.core.tool_api import ToolContext, ToolError, ToolResult
from ink_tui.tools.binary import decode_text
from ink_tui.tools.diff import unified_diff
from ink_tui.tools.path_target import PathChangedError, PathTarget, open_resolved, path_target
from ink_tui.tools.textfile import changed_error

# Old content above this size is not diffed: the diff would be too big to show anyway.
_MAX_DIFF_SOURCE = 1024 * 1024


class WriteTool:
    name = "write"
    description = (
        "Write `content` to a file, creating it (and any missing parent directories) or "
        "replacing all of its current content. Reports how many lines and bytes were "
        "written and whether the file was created or overwritten. To change part of an "
        "existing file, prefer edit. Paths are relative to the workspace; absolute paths "
        "and ~ work too."
    )
    concurrency_safe = False

    def __init__(self) -> None:
        # Built per instance: the schema is a mutable dict handed to the scheduler.
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File to write."},
                "content": {"type": "string", "description": "The complete new file content."},
            },
            "required": ["path", "content"],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        # The file the approval gate judged: symlinks followed as the file system does.
        target = await asyncio.to_thread(path_target, ctx.workspace, args["path"])
        shown = target.shown
        content: str = args["content"]
        data = content.encode("utf-8", errors="replace")
        existed, old = await asyncio.to_thread(_write, target, shown, data)
        created = not existed
        lines = count_lines(content)
        noun = "line" if lines == 1 else "lines"
        how = "created a new file" if created else "overwrote the existing file"
        details: dict[str, Any] = {
            "path": shown,
            "created": created,
            "lines": lines,
            "bytes": len(data),
        }
        if old is not None and old != content:
            details["diff"] = unified_diff(old, content, shown)
        return ToolResult(
            f"wrote {lines} {noun} ({len(data)} bytes) to {shown} ({how})", details=details
        )


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _write(target: PathTarget, shown: str, data: bytes) -> tuple[bool, str | None]:
    """Write the file. Returns whether it existed, and its old text when that can be
    diffed (not binary, not huge). Blocking."""
    path = target.real
    try:
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:
        raise _in_the_way(shown) from None
    except OSError as exc:
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise ToolError(f"{shown} is a directory; give the path of a file to write")
    existed = mode is not None
    old = _old_text(target) if mode is not None and stat.S_ISREG(mode) else None
    try:
        # No symlink is followed on the way: one put there since `path_target` would
        # send the write elsewhere.
        fd = open_resolved(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, make_parents=True)
    except PathChangedError:
        raise changed_error(shown) from None
    except (FileExistsError, NotADirectoryError):
        raise _in_the_way(shown) from None
    except PermissionError:
        raise ToolError(f"cannot write {shown}: permission denied") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory; give the path of a file to write") from None
    except OSError as exc:
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
    except OSError as exc:
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
    return existed, old


def _old_text(target: PathTarget) -> str | None:
    try:
        fd = open_resolved(target.real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        try:
            if os.fstat(file.fileno()).st_size > _MAX_DIFF_SOURCE:
                return None
            return decode_text(file.read())
        except OSError:
            return None


def _in_the_way(shown: str) -> ToolError:
    return ToolError(f"cannot create the directories for {shown}: a file is in the way")
