"""The `edit` tool: exact-text replacements in one file, all applied or none."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ink_tui.core.tool_api import ToolContext, ToolError, ToolResult
from ink_tui.tools.diff import unified_diff
from ink_tui.tools.path_target import PathChangedError, open_resolved, path_target
from ink_tui.tools.textfile import changed_error, load_text
from ink_tui.tools.truncate import keep_head, split_lines

# The diff in the model's content is a preview; the full one is in details["diff"].
_DIFF_PREVIEW_LINES = 60
_DIFF_PREVIEW_BYTES = 4096


@dataclass(frozen=True, slots=True)
class _Span:
    number: int  # 1-based position of the edit in the call
    start: int
    end: int
    new_text: str


class EditTool:
    name = "edit"
    description = (
        "Replace exact text in an existing text file. Each edit's `old_text` must occur "
        "exactly once in the file as it is before this call (whitespace and indentation "
        "included), and edits must not overlap; include enough surrounding lines to make "
        "it unique. All edits are applied together or, if any one fails, none is and the "
        "error says which edit failed and why. Line endings (LF or CRLF) and a final "
        "newline or its absence are preserved. Returns a unified diff. Paths are relative "
        "to the workspace; absolute paths and ~ work too."
    )
    concurrency_safe = False

    def __init__(self) -> None:
        # Built per instance: the schema is a mutable dict handed to the scheduler.
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File to edit."},
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "description": "Replacements, each matched against the original file.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "old_text": {
                                "type": "string",
                                "minLength": 1,
                                "description": "Exact text to replace; must occur once.",
                            },
                            "new_text": {"type": "string", "description": "Replacement text."},
                        },
                        "required": ["old_text", "new_text"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["path", "edits"],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        # The file the approval gate judged: symlinks followed as the file system does.
        target = await asyncio.to_thread(path_target, ctx.workspace, args["path"])
        shown = target.shown
        edits: list[dict[str, str]] = args["edits"]
        original, updated = await asyncio.to_thread(_edit_file, target.real, shown, edits)
        diff = unified_diff(original, updated, shown)
        preview = keep_head(split_lines(diff), _DIFF_PREVIEW_LINES, _DIFF_PREVIEW_BYTES)
        body = preview.text
        if preview.truncated:
            body += "\n[diff preview cut; the file was fully edited]"
        count = len(edits)
        noun = "edit" if count == 1 else "edits"
        return ToolResult(
            f"applied {count} {noun} to {shown}\n\n{body}",
            details={"path": shown, "diff": diff, "edits": count},
        )


def _edit_file(path: Path, shown: str, edits: list[dict[str, str]]) -> tuple[str, str]:
    """Apply the edits and write the file; nothing is written if any edit fails. Blocking."""
    original = load_text(path, shown, "edit")
    updated = apply_edits(original, edits, shown)
    try:
        # No symlink followed: one put on the path since it was resolved fails the write.
        with os.fdopen(open_resolved(path, os.O_WRONLY | os.O_TRUNC), "wb") as file:
            file.write(updated.encode("utf-8"))
    except PathChangedError:
        raise changed_error(shown) from None
    except OSError as exc:
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None
    return original, updated


def apply_edits(original: str, edits: list[dict[str, str]], shown: str) -> str:
    """The new text, or ToolError listing every edit that cannot be applied."""
    to_file = _line_ending_converter(original)
    spans: list[_Span] = []
    problems: list[str] = []
    for number, edit in enumerate(edits, start=1):
        old_text = to_file(edit["old_text"])
        start = original.find(old_text)
        if start < 0:
            problems.append(
                f"edit {number}: old_text not found in {shown}; it must match the file "
                "exactly, including whitespace and indentation (read the file to check)"
            )
            continue
        if original.find(old_text, start + 1) >= 0:
            times = max(2, original.count(old_text))
            problems.append(
                f"edit {number}: old_text found {times} times in {shown}; add more "
                "surrounding context so it matches exactly once"
            )
            continue
        span = _Span(number, start, start + len(old_text), to_file(edit["new_text"]))
        clash = next((s for s in spans if s.start < span.end and span.start < s.end), None)
        if clash is not None:
            problems.append(
                f"edit {number}: old_text overlaps edit {clash.number}; merge them into one edit"
            )
            continue
        spans.append(span)
    if problems:
        raise ToolError("no edits were applied.\n" + "\n".join(problems))
    pieces: list[str] = []
    position = 0
    for span in sorted(spans, key=lambda s: s.start):
        pieces += [original[position : span.start], span.new_text]
        position = span.end
    pieces.append(original[position:])
    updated = "".join(pieces)
    if updated == original:
        raise ToolError(f"the edits leave {shown} unchanged: each new_text equals its old_text")
    return updated


def _line_ending_converter(original: str) -> Callable[[str], str]:
    """Map the model's "\\n" text to the file's line endings.

    Only a file whose every newline is CRLF is treated as CRLF; a mixed file is matched
    as it is, so lines the edits do not touch keep their endings either way.
    """
    newlines = original.count("\n")
    crlf = newlines > 0 and original.count("\r\n") == newlines

    def convert(text: str) -> str:
        text = text.replace("\r\n", "\n")
        return text.replace("\n", "\r\n") if crlf else text

    return convert
