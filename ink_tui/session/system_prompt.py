"""The system prompt: who the agent is, where it works, what it can use."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from ink_tui.core.tool_api import Tool


def build_system_prompt(
    workspace: Path, tools: Sequence[Tool], today: dt.date | None = None
) -> str:
    day = (today or dt.date.today()).isoformat()
    tool_lines = "\n".join(f"- {tool.name}: {tool.description.splitlines()[0]}" for tool in tools)
    return (
        "You are ink, a coding agent working in the user's terminal. You help with software "
        "tasks by reading, searching and editing files and running commands in the "
        "workspace. Be direct and concise; show the user what you changed.\n\n"
        f"Workspace: {workspace}\n"
        f"Today's date: {day}\n\n"
        f"Tools:\n{tool_lines}\n\n"
        "Paths are relative to the workspace. Read a file before you edit it. The user may "
        "send corrections while you work: follow the newest instruction."
    )
