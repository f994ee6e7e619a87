"""The `find` tool: files whose workspace-relative path matches a glob.

The walk runs in a child process (find_worker.py) with a time budget, so a glob whose
regex backtracks for ages cannot freeze the app.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pathspec import GitIgnoreSpec

from ink_tui.core.tool_api import ToolContext, ToolError, ToolLimits, ToolResult
from ink_tui.tools.child_process import ChildTimeout, run_in_child
from ink_tui.tools.globs import compile_glob
from ink_tui.tools.paths import workspace_root
from ink_tui.tools.walk import walk_files

_DEFAULTS = ToolLimits()
# Long enough for a big tree in pure Python; short enough to report a runaway glob.
FIND_BUDGET_S = 20.0


class FindTool:
    name = "find"
    description = (
        "Find files by glob, relative to the workspace. A pattern without '/' matches file "
        "names at any depth (`*.py`, `README*`); a pattern with '/' matches from the "
        "workspace root (`src/*.ts`, `src/**/test_*.py`, `**/fixtures/*.json`); `**` spans "
        "directories and naming a directory lists the files under it. Files ignored by "
        ".gitignore and the .git directory are skipped. Lists paths sorted, at most "
        f"{_DEFAULTS.max_entries}, with a note of how many more matched."
    )
    concurrency_safe = True
    # Never changes a file: no checkpoint before its calls.
    read_only = True

    def __init__(self, budget_s: float = FIND_BUDGET_S) -> None:
        """`budget_s`: how long the walk may take before the call gives up."""
        self._budget_s = budget_s
        # Built per instance: the schema is a mutable dict handed to the scheduler.
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Glob such as `**/*.py` or `src/*.ts`.",
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        root = workspace_root(ctx.workspace)
        pattern = _relative_pattern(args["pattern"].strip(), root)
        compile_glob(pattern)
        request = {"root": str(root), "pattern": pattern}
        async with ctx.signal.scope():
            try:
                answer = await run_in_child(
                    "ink_tui.tools.find_worker", request, self._budget_s, root
                )
            except ChildTimeout:
                raise ToolError(
                    f"find gave up after {self._budget_s:g} s: matching {pattern!r} took too "
                    "long (many `*` in one name can make a glob very slow). Simplify the "
                    "pattern"
                ) from None
        found = [str(path) for path in answer["found"]]
        if not found:
            details = {"files": 0, "shown": 0, "total": 0}
            return ToolResult(f"no files match {pattern!r}", details=details)
        found.sort()
        cap = ctx.limits.max_entries
        lines = found[:cap]
        if len(found) > cap:
            lines.append(
                f"\n[showing {cap} of {len(found)} files; use a narrower pattern to see the rest]"
            )
        details = {
            "files": len(found),
            "truncated": len(found) > cap,
            "shown": min(len(found), cap),
            "total": len(found),
        }
        return ToolResult("\n".join(lines), details=details)


def _relative_pattern(pattern: str, root: Path) -> str:
    # An absolute path inside the workspace is what the model meant relative to it.
    if os.path.isabs(pattern):
        with contextlib.suppress(ValueError):
            pattern = Path(pattern).relative_to(root).as_posix()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern


def find_files(root: Path, spec: GitIgnoreSpec, should_stop: Callable[[], bool]) -> list[str]:
    """Workspace-relative paths of the files `spec` matches, walk order. Blocking."""
    found: list[str] = []
    for path in walk_files(root, root, should_stop=should_stop):
        relative = path.relative_to(root).as_posix()
        if spec.match_file(relative):
            found.append(relative)
    return found
