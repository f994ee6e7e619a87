"""The `grep` tool: regex search over files, by ripgrep when it can run, else in Python.

rg is the system's when it is on PATH, else the `ripgrep` wheel's (`pip install -e '.[rg]'`;
not required, since some of its releases are source only and need Rust to build). Without
either, the Python fallback runs in a child process (see grep_worker.py) so that a pattern
that backtracks for ever cannot freeze the app.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ink_tui.core.tool_api import ToolContext, ToolError, ToolLimits, ToolResult
from ink_tui.tools.binary import SNIFF_BYTES, binary_error, looks_binary
from ink_tui.tools.globs import compile_glob
from ink_tui.tools.grep_common import MAX_LINE_CHARS, GrepMatches, GrepQuery
from ink_tui.tools.grep_ripgrep import find_ripgrep, search_ripgrep
from ink_tui.tools.grep_subprocess import PYTHON_BUDGET_S, search_python_process
from ink_tui.tools.paths import display_path, not_found_error, resolve_path

_DEFAULTS = ToolLimits()


class GrepTool:
    name = "grep"
    description = (
        "Search file contents for a regular expression (ripgrep/Rust syntax; matched line "
        "by line). Searches `path` (a directory or file, default the workspace) "
        "recursively, skipping binary files, files ignored by .gitignore and the .git "
        "directory; dotfiles are searched. `glob` limits the files searched, gitignore-style "
        "and relative to the workspace (`*.py` at any depth, `src/**/*.ts` anchored, "
        "`!*.min.js` to exclude). Prints `path:line: text`, paths relative to the workspace, "
        f"lines over {MAX_LINE_CHARS} characters cut. Stops after "
        f"{_DEFAULTS.max_entries} matches with a note; narrow the pattern, path or glob then."
    )
    concurrency_safe = True
    # Never changes a file: no checkpoint before its calls.
    read_only = True

    def __init__(
        self, use_ripgrep: bool | None = None, python_budget_s: float = PYTHON_BUDGET_S
    ) -> None:
        """`use_ripgrep`: None picks rg when it is found; True insists on it; False never.

        `python_budget_s`: how long the Python fallback may search before giving up.
        """
        self._use_ripgrep = use_ripgrep
        self._python_budget_s = python_budget_s
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "description": "Regular expression."},
                "path": {
                    "type": "string",
                    "description": "Directory or file to search (default: the workspace).",
                },
                "glob": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Only search files matching this glob, e.g. `*.py`.",
                },
                "ignore_case": {
                    "type": "boolean",
                    "description": "Match without regard to case (default false).",
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        target = resolve_path(ctx.workspace, args.get("path") or ".")
        shown = display_path(ctx.workspace, target)
        query = GrepQuery(
            pattern=args["pattern"],
            target=target,
            workspace=ctx.workspace,
            glob=args.get("glob"),
            ignore_case=bool(args.get("ignore_case", False)),
        )
        if query.glob:
            compile_glob(query.glob.removeprefix("!"))
        await asyncio.to_thread(_check_target, target, shown)
        matches = GrepMatches(ctx.workspace, ctx.limits.max_entries, ctx.limits.max_bytes)
        rg = self._ripgrep()
        async with ctx.signal.scope():
            if rg is not None:
                await search_ripgrep(rg, query, matches)
            else:
                await search_python_process(query, matches, self._python_budget_s)
        details: dict[str, Any] = {
            "matches": len(matches.lines),
            "truncated": matches.capped,
            "backend": "ripgrep" if rg is not None else "python",
            "shown": len(matches.lines),
            # Unknown once the search stopped at the caps.
            "total": None if matches.capped else len(matches.lines),
        }
        if not matches.lines:
            where = shown + (f" (files matching {query.glob!r})" if query.glob else "")
            return ToolResult(f"no matches for {query.pattern!r} in {where}", details=details)
        content = "\n".join(matches.lines)
        if matches.capped:
            content += (
                f"\n\n[stopped after {len(matches.lines)} matches; more exist. Narrow the "
                "pattern, path or glob to see them]"
            )
        return ToolResult(content, details=details)

    def _ripgrep(self) -> str | None:
        if self._use_ripgrep is False:
            return None
        rg = find_ripgrep()
        if rg is None and self._use_ripgrep:
            raise ToolError("grep was set up to use ripgrep (rg), but rg is not installed")
        return rg


def _check_target(target: Path, shown: str) -> None:
    """Refuse a missing target or a binary file named explicitly. Blocking."""
    if not target.exists():
        raise not_found_error(target, shown)
    if target.is_file():
        try:
            with target.open("rb") as file:
                head = file.read(SNIFF_BYTES)
        except OSError as exc:
            raise ToolError(f"cannot read {shown}: {exc.strerror or exc}") from None
        if looks_binary(head):
            raise binary_error(shown, "grep")
