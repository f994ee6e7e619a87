"""The agent's tools: read, write, edit, bash, ls, grep and find.

Each tool follows `ink_tui.core.tool_api.Tool`: arguments arrive already validated
against its JSON schema, paths are relative to the workspace, problems the model can fix
are raised as `ToolError`, and display-only facts go in `ToolResult.details`.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ink_tui.core.tool_api import Tool
    from ink_tui.tools.jobs import JobTable

# Tools are imported when first used, not with the package: the app's first frame and
# modules that only need a helper (e.g. `ink_tui.tools.walk`) do not pay for all seven.
_TOOL_MODULES = {
    "ReadTool": "read",
    "WriteTool": "write",
    "EditTool": "edit",
    "BashTool": "bash",
    "LsTool": "ls",
    "GrepTool": "grep",
    "FindTool": "find",
}

# The modules behind the tools, for code that imports them ahead of use.
TOOL_MODULE_NAMES = tuple(_TOOL_MODULES.values())

__all__ = [*_TOOL_MODULES, "TOOL_MODULE_NAMES", "default_tools"]


def __getattr__(name: str) -> Any:
    module = _TOOL_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


def default_tools(
    hide_env: Iterable[str] = (), pass_env: Iterable[str] = (), jobs: JobTable | None = None
) -> list[Tool]:
    """One instance of each tool, in the order they are offered to the model.

    `hide_env` and `pass_env` go to bash: which API key variables its commands run
    without, beyond the well-known ones, and which they get all the same. `jobs` is the
    session's table bash's commands belong to (default: one of bash's own).
    """
    return [
        __getattr__(name)(hide_env, pass_env, jobs) if name == "BashTool" else __getattr__(name)()
        for name in _TOOL_MODULES
    ]
