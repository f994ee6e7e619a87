"""The system prompt: who the agent is, where it works, what it can use, what it was told."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from ink_tui.core.tool_api import Tool
from ink_tui.session.context_files import ContextFile


def build_system_prompt(
    workspace: Path,
    tools: Sequence[Tool],
    context_files: Sequence[ContextFile] = (),
    today: dt.date | None = None,
) -> str:
    day = (today or dt.date.today()).isoformat()
    tool_lines = "\n".join(f"- {tool.name}: {tool.description.splitlines()[0]}" for tool in tools)
    prompt = (
        "You are ink, a coding agent working in the user's terminal. You help with software "
        "tasks by reading, searching and editing files and running commands in the "
        "workspace. Be direct and concise; show the user what you changed.\n\n"
        f"Workspace: {workspace}\n"
        f"Today's date: {day}\n\n"
        f"Tools:\n{tool_lines}\n\n"
        "Paths are relative to the workspace. Read a file before you edit it. The user may "
        "send corrections while you work: follow the newest instruction."
    )
    return prompt + _context_section(context_files)


def _context_section(files: Sequence[ContextFile]) -> str:
    used = [f for f in files if not f.skipped and f.text.strip()]
    if not used:
        return ""
    parts = [
        "\n\nInstructions from the user and the project follow, from the most general to "
        "the most specific; where they conflict, the later file wins."
    ]
    for file in used:
        cut = f"\n[{file.note}]" if file.note else ""
        parts.append(f"# Context file: {file.path}\n\n{file.text.rstrip()}{cut}")
    return "\n\n".join(parts)
