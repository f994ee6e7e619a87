"""The `write` tool: create or overwrite a file with the given content."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ink_tui.core.tool_api import ToolContext, ToolError, ToolResult
from ink_tui.tools.binary import decode_text
from ink_tui.tools.diff import unified_diff
from ink_tui.tools.paths import display_path, resolve_path

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
        path = resolve_path(ctx.workspace, args["path"])
        shown = display_path(ctx.workspace, path)
        content: str = args["content"]
        data = content.encode("utf-8", errors="replace")
        existed, old = await asyncio.to_thread(_write, path, shown, data)
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


def _write(path: Path, shown: str, data: bytes) -> tuple[bool, str | None]:
    """Write the file. Returns whether it existed, and its old text when that can be
    diffed (not binary, not huge). Blocking."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; give the path of a file to write")
    existed = path.exists()
    old: str | None = None
    if existed:
        try:
            if path.stat().st_size <= _MAX_DIFF_SOURCE:
                old = decode_text(path.read_bytes())
        except OSError:
            pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(
            f"cannot create the directories for {shown}: a file is in the way"
        ) from None
    except PermissionError:
        raise ToolError(f"cannot create the directories for {shown}: permission denied") from None
    try:
        path.write_bytes(data)
    except PermissionError:
        raise ToolError(f"cannot write {shown}: permission denied") from None
    except OSError as exc:
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
    return existed, old
