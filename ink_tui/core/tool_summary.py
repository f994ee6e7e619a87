"""One-line descriptions of tool calls, shared by print mode and the full-screen app."""

from __future__ import annotations

from typing import Any

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
}


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
    if key == "path" and not args:
        return f"{call.name} ."
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


def summary_line(call: ToolCall, result: ToolResult, duration_s: float) -> str:
    mark = "✗" if result.is_error else "✓"
    took = f" ({duration_s:.1f}s)" if duration_s >= 0.1 else ""
    if result.is_error:
        return f"{mark} {call_label(call)}{took}: {result_line(result)}"
    lines = count_lines(result.content)
    return f"{mark} {call_label(call)}{took}: {lines} line{'s' if lines != 1 else ''}"
