"""The `read` tool: a window of a text file's lines, head first, with paging notes."""

from __future__ import annotations

import asyncio
import codecs
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ink_tui.core.abort import AbortError, AbortSignal
from ink_tui.core.tool_api import ToolContext, ToolError, ToolLimits, ToolResult
from ink_tui.tools.binary import SNIFF_BYTES, binary_error, looks_binary
from ink_tui.tools.path_target import path_target
from ink_tui.tools.textfile import open_error, open_regular
from ink_tui.tools.truncate import format_size, keep_head

_DEFAULTS = ToolLimits()
_CHUNK = 1 << 20
# How often (in lines) the scan checks for an abort.
_ABORT_CHECK_EVERY = 4096


@dataclass(frozen=True, slots=True)
class _Window:
    # Lines from the offset on, as many as could be shown (maybe one over the byte cap).
    lines: list[str]
    total_lines: int


class ReadTool:
    name = "read"
    description = (
        "Read a UTF-8 text file and return its lines as they are (no line numbers added). "
        "Reads from `offset` (1-based line number, default 1); `limit` asks for at most "
        f"that many lines. One call returns at most {_DEFAULTS.max_lines} lines or "
        f"{format_size(_DEFAULTS.max_bytes)}; when more remains, a note at the end names the "
        "lines shown and the offset to continue from. A single line longer than "
        f"{format_size(_DEFAULTS.max_bytes)} is cut. Binary files and directories are refused "
        "(use ls for directories). Paths are relative to the workspace; absolute paths and "
        "~ work too."
    )
    concurrency_safe = True
    # Never changes a file: no checkpoint before its calls.
    read_only = True

    def __init__(self) -> None:
        # Built per instance: the schema is a mutable dict handed to the scheduler.
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File to read."},
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "1-based line number to start at (default 1).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Maximum number of lines to return.",
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        # Symlinks followed as the file system does: the same judgement as write and edit.
        target = await asyncio.to_thread(path_target, ctx.workspace, args["path"])
        path, shown = target.real, target.shown
        offset: int = args.get("offset", 1)
        limit: int | None = args.get("limit")
        limits = ctx.limits
        wanted = min(limit, limits.max_lines) if limit is not None else limits.max_lines
        async with ctx.signal.scope():
            window = await asyncio.to_thread(
                _scan, path, shown, offset, wanted, limits.max_bytes, ctx.signal
            )
        return _result(shown, offset, window, limits)


def _result(shown: str, offset: int, window: _Window, limits: ToolLimits) -> ToolResult:
    total = window.total_lines
    if total == 0:
        if offset > 1:
            raise ToolError(f"offset {offset} is beyond the end of {shown}: the file is empty")
        return ToolResult(
            f"[{shown} is empty]",
            details={"path": shown, "total_lines": 0, "shown": 0, "total": 0},
        )
    if offset > total:
        raise ToolError(
            f"offset {offset} is beyond the end of {shown}: it has {total} lines "
            f"(use an offset from 1 to {total})"
        )
    cut = keep_head(window.lines, limits.max_lines, limits.max_bytes)
    last = offset + len(cut.lines) - 1
    notes: list[str] = []
    if cut.line_cut:
        size = len(window.lines[0].encode("utf-8"))
        notes.append(
            f"[line {offset} is {size} bytes, more than the {format_size(limits.max_bytes)} "
            "cap; only its start is shown. Use bash (e.g. `cut -c`) to see the rest of it]"
        )
    shown_lines = f"line {offset}" if last == offset else f"lines {offset}-{last}"
    if last < total:
        cap = ""
        if cut.by_bytes and not cut.line_cut:
            cap = f" ({format_size(limits.max_bytes)} limit)"
        notes.append(f"[showing {shown_lines} of {total}{cap}; use offset={last + 1} to continue]")
    elif offset > 1:
        notes.append(f"[showing {shown_lines} of {total}; end of file]")
    content = cut.text if not notes else cut.text + "\n\n" + "\n".join(notes)
    details = {
        "path": shown,
        "first_line": offset,
        "last_line": last,
        "total_lines": total,
        "truncated": last < total or cut.line_cut,
        # Lines of the file in the result, for summaries (the notes are not counted).
        "shown": len(cut.lines),
        "total": total,
    }
    return ToolResult(content, details=details)


def _scan(
    path: Path, shown: str, first: int, wanted: int, max_bytes: int, signal: AbortSignal
) -> _Window:
    """Collect the window's lines, then count (and check) the rest. Blocking."""
    try:
        file = os.fdopen(open_regular(path, shown), "rb")
    except OSError as exc:
        raise open_error(exc, path, shown) from None
    with file:
        if looks_binary(file.read(SNIFF_BYTES)):
            raise binary_error(shown, "read")
        file.seek(0)
        picked: list[str] = []
        picked_bytes = 0
        total = 0
        for raw in file:
            total += 1
            line = _decode_line(raw, shown)
            if total >= first:
                picked.append(line)
                picked_bytes += len(raw)
                # One line past the byte cap is kept so keep_head can cut a lone long line.
                if len(picked) >= wanted or picked_bytes > max_bytes:
                    break
            if total % _ABORT_CHECK_EVERY == 0 and signal.aborted:
                raise AbortError(signal.reason or "aborted")
        else:
            return _Window(picked, total)
        # The window is full; the rest is only counted, in big chunks rather than lines.
        decoder = codecs.getincrementaldecoder("utf-8")()
        rest_bytes = 0
        last_byte = b""
        while chunk := file.read(_CHUNK):
            if signal.aborted:
                raise AbortError(signal.reason or "aborted")
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                raise binary_error(shown, "read") from None
            total += chunk.count(b"\n")
            rest_bytes += len(chunk)
            last_byte = chunk[-1:]
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise binary_error(shown, "read") from None
        if rest_bytes and last_byte != b"\n":
            total += 1
        return _Window(picked, total)


def _decode_line(raw: bytes, shown: str) -> str:
    # "\n" never occurs inside a multi-byte UTF-8 sequence, so lines decode on their own.
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise binary_error(shown, "read") from None
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line
