"""One-line descriptions of tool calls, shared by print mode and the full-screen app.

A summary counts what the model was shown, from the result's details rather than its
text: the text also holds notes ("[showing lines 1-2000 of 3000 …]", "exit code 0") that
are not output. Tools that list things put two numbers in `details`:

- `shown`: lines (read, bash), entries (ls), matches (grep) or files (find) in the result;
- `total`: how many there were in all, when known (None when the tool stopped early).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Annotations only: the transcript imports this module before the first frame.
    from ink_tui.core.messages import ToolCall
    from ink_tui.core.tool_api import ToolResult

# The argument that best names what a call is about, per tool.
_MAIN_ARGUMENT = {
    "read": "path",
    "write": "path",
    "edit": "path",
    "ls": "path",
    "bash": "command",
    "grep": "pattern",
    "find": "pattern",
    "task": "description",
}

# Tools whose path argument may be left out, meaning the workspace.
_PATH_DEFAULTS_TO_WORKSPACE = frozenset({"ls"})

# What `shown` counts, per tool: (one, many, none).
_UNITS = {
    "read": ("line", "lines", "empty file"),
    "bash": ("line", "lines", "no output"),
    "ls": ("entry", "entries", "empty folder"),
    "grep": ("match", "matches", "no matches"),
    "find": ("file", "files", "no files"),
}
_LINES = ("line", "lines", "no output")


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def call_label(call: ToolCall, width: int = 60) -> str:
    """`read README.md`, `bash ls -la`, or the name and JSON-ish args for other tools."""
    args: dict[str, Any] = call.arguments
    key = _MAIN_ARGUMENT.get(call.name)
    if key is not None and isinstance(args.get(key), str):
        main = args[key]
        if call.name == "grep" and args.get("path"):
            main = f"{main} in {args['path']}"
        return f"{call.name} {_shorten(main, width)}"
    if key == "path" and key not in args:
        if call.name in _PATH_DEFAULTS_TO_WORKSPACE:
            return f"{call.name} ."
        # A call that never said what to read must not look like it read the workspace.
        if not args:
            return f"{call.name} (no path)"
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{call.name} {_shorten(shown, width)}".rstrip()


def result_line(result: ToolResult, width: int = 80) -> str:
    """The first meaningful line of a result, for a one-line summary."""
    for line in result.content.splitlines():
        if line.strip():
            return _shorten(line, width)
    return "(no output)"


def count_lines(text: str) -> int:
    return len(text.splitlines())


def shown_text(call: ToolCall, result: ToolResult) -> str:
    """What a successful result showed: "1025 of 3000 lines", "3 matches", "no output"."""
    details = result.details
    shown = details.get("shown")
    if not isinstance(shown, int):
        if call.name in ("write", "edit"):
            # Their result is a sentence that says it all: "wrote 3 lines (12 bytes) to …".
            return result_line(result)
        shown = count_lines(result.content)
        return f"{shown} {_LINES[0] if shown == 1 else _LINES[1]}"
    one, many, none = _UNITS.get(call.name, _LINES)
    if shown == 0:
        return none
    total = details.get("total")
    if isinstance(total, int) and total > shown:
        return f"{shown} of {total} {many}"
    text = f"{shown} {one if shown == 1 else many}"
    if total is None and details.get("truncated"):
        return f"{text} (more not shown)"
    if details.get("truncated"):
        return f"{text} (cut)"
    return text


def summary_line(call: ToolCall, result: ToolResult, duration_s: float) -> str:
    mark = "✗" if result.is_error else "✓"
    took = f" ({duration_s:.1f}s)" if duration_s >= 0.1 else ""
    if result.is_error:
        return f"{mark} {call_label(call)}{took}: {result_line(result)}"
    return f"{mark} {call_label(call)}{took}: {shown_text(call, result)}"
