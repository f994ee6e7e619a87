"""The agent's tools: read, write, edit, bash, ls, grep and find.

Each tool follows `ink_tui.core.tool_api.Tool`: arguments arrive already validated
against its JSON schema, paths are relative to the workspace, problems the model can fix
are raised as `ToolError`, and display-only facts go in `ToolResult.details`.
"""

from __future__ import annotations

from ink_tui.core.tool_api import Tool
from ink_tui.tools.bash import BashTool
from ink_tui.tools.edit import EditTool
from ink_tui.tools.find import FindTool
from ink_tui.tools.grep import GrepTool
from ink_tui.tools.ls import LsTool
from ink_tui.tools.read import ReadTool
from ink_tui.tools.write import WriteTool

__all__ = [
    "BashTool",
    "EditTool",
    "FindTool",
    "GrepTool",
    "LsTool",
    "ReadTool",
    "WriteTool",
    "default_tools",
]


def default_tools() -> list[Tool]:
    """One instance of each tool, in the order they are offered to the model."""
    return [ReadTool(), WriteTool(), EditTool(), BashTool(), LsTool(), GrepTool(), FindTool()]
