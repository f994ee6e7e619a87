"""How ink's tool calls look to an ACP client: kind, title, locations and content.

Pure rules over a call's name and arguments (and the file texts the projection read
before and after a write/edit), so they are tested without a process. Paths go out
absolute, as ACP wants them; a path outside the workspace is shown as given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.helpers import text_block, tool_content, tool_diff_content
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolKind,
)

# ink never sends terminal content (it runs commands itself), but the schema's lists are
# of all three.
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

# ACP's kinds pick the client's icon and treatment. `task` starts a sub-agent that
# plans and reports back: "think", as the Claude Code adapter shows its Task tool.
KINDS: dict[str, ToolKind] = {
    "read": "read",
    "ls": "read",
    "grep": "search",
    "find": "search",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "task": "think",
}

# Tools whose result is a changed file: their content is a diff of the file's text.
FILE_CHANGING = frozenset({"write", "edit"})

# A title is one line; a long command is cut here.
TITLE_WIDTH = 100
# Larger files are not read for a diff (the client would not show it well either).
DIFF_LIMIT = 1 << 20


def tool_kind(name: str) -> ToolKind:
    return KINDS.get(name, "other")


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """What the client lists for the call: the command, the path, the pattern."""
    path = _text(arguments.get("path"))
    match name:
        case "bash":
            return _one_line(_text(arguments.get("command"))) or "bash"
        case "read":
            return f"Read {path}"
        case "write":
            return f"Write {path}"
        case "edit":
            return f"Edit {path}"
        case "ls":
            return f"List {path or '.'}"
        case "grep" | "find":
            pattern = _text(arguments.get("pattern"))
            where = f" in {path}" if path else ""
            return _one_line(f"{name.capitalize()} {pattern}{where}")
        case "task":
            return _one_line(f"Task: {_text(arguments.get('description')) or 'sub-agent'}")
    return name


def tool_locations(workspace: Path, name: str, arguments: dict[str, Any]) -> list[ToolCallLocation]:
    """The files a call touches, for the client's follow-along (empty when none)."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path or name in ("bash", "task"):
        return []
    line = arguments.get("offset") if name == "read" else None
    return [
        ToolCallLocation(
            path=str(absolute(workspace, path)),
            line=line if isinstance(line, int) and line > 0 else None,
        )
    ]


def absolute(workspace: Path, path: str) -> Path:
    target = Path(path).expanduser()
    return target if target.is_absolute() else workspace / target


def read_for_diff(workspace: Path, arguments: dict[str, Any]) -> str | None:
    """The text of the file a write/edit names, None when missing, unreadable or large."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    target = absolute(workspace, path)
    try:
        if not target.is_file() or target.stat().st_size > DIFF_LIMIT:
            return None
        return target.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def end_content(
    workspace: Path,
    name: str,
    arguments: dict[str, Any],
    result: str,
    *,
    is_error: bool,
    before: str | None,
) -> list[ToolContent]:
    """A finished call's content: a diff for a file it changed, else the text the model
    got (for bash its output, as text: ink runs commands itself, not in a client
    terminal)."""
    if name in FILE_CHANGING and not is_error:
        after = read_for_diff(workspace, arguments)
        if after is not None:
            shown = str(absolute(workspace, str(arguments["path"])))
            return [tool_diff_content(shown, after, before)]
    if not result:
        return []
    return [tool_content(text_block(result))]


def proposed_content(
    workspace: Path, name: str, arguments: dict[str, Any], before: str | None, preview: str
) -> list[ToolContent]:
    """What a permission question shows: the diff the write/edit would make, worked out
    from the arguments (an edit that would not apply shows ink's preview as text)."""
    path = arguments.get("path")
    if name in FILE_CHANGING and isinstance(path, str) and path:
        shown = str(absolute(workspace, path))
        content = arguments.get("content")
        if name == "write" and isinstance(content, str):
            return [tool_diff_content(shown, content, before)]
        edits = arguments.get("edits")
        if name == "edit" and before is not None and isinstance(edits, list):
            from ink_tui.core.tool_api import ToolError
            from ink_tui.tools.edit import apply_edits

            try:
                return [tool_diff_content(shown, apply_edits(before, edits, path), before)]
            except (ToolError, KeyError, TypeError, AttributeError):
                pass
    return [text_content(preview)] if preview else []


def text_content(text: str) -> ContentToolCallContent:
    return tool_content(text_block(text))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    if len(first) > TITLE_WIDTH or first != text.strip():
        return first[: TITLE_WIDTH - 1].rstrip() + "…"
    return first
