"""The `ls` tool: one directory's entries, sorted, directories marked with "/"."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from ink_tui.core.tool_api import ToolContext, ToolError, ToolLimits, ToolResult
from ink_tui.tools.path_target import path_target
from ink_tui.tools.paths import not_found_error

_DEFAULTS = ToolLimits()


class LsTool:
    name = "ls"
    description = (
        "List the entries of a directory (default: the workspace), sorted by name, "
        "directories with a trailing '/', dotfiles included, nothing ignored. At most "
        f"{_DEFAULTS.max_entries} entries are listed, with a note of how many were left out; "
        "use find or grep to search big trees. Paths are relative to the workspace; absolute "
        "paths and ~ work too."
    )
    concurrency_safe = True
    # Never changes a file: no checkpoint before its calls.
    read_only = True

    def __init__(self) -> None:
        # Built per instance: the schema is a mutable dict handed to the scheduler.
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Directory to list (default: the workspace).",
                },
            },
            "required": [],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        # Symlinks followed as the file system does: the same judgement as the other tools.
        target = await asyncio.to_thread(path_target, ctx.workspace, args.get("path") or ".")
        path, shown = target.real, target.shown
        names = await asyncio.to_thread(_list, path, shown)
        total = len(names)
        if total == 0:
            details = {"entries": 0, "truncated": False, "shown": 0, "total": 0}
            return ToolResult(f"[{shown} is empty]", details=details)
        cap = ctx.limits.max_entries
        lines = names[:cap]
        if total > cap:
            lines.append(f"\n[{total - cap} more entries not shown ({total} in total)]")
        details = {
            "entries": total,
            "truncated": total > cap,
            "shown": min(total, cap),
            "total": total,
        }
        return ToolResult("\n".join(lines), details=details)


def _list(path: Path, shown: str) -> list[str]:
    """Entry names, "/" after directories, sorted case-insensitively. Blocking."""
    try:
        with os.scandir(path) as it:
            entries = [(entry.name, _is_dir(entry)) for entry in it]
    except FileNotFoundError:
        raise not_found_error(path, shown) from None
    except NotADirectoryError:
        raise ToolError(f"{shown} is a file, not a directory; use read to see it") from None
    except PermissionError:
        raise ToolError(f"cannot list {shown}: permission denied") from None
    entries.sort(key=lambda item: (item[0].casefold(), item[0]))
    return [name + "/" if is_dir else name for name, is_dir in entries]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
