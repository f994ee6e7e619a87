"""The Python grep fallback, run in a child process (grep_worker.py; child_process.py
says why): killed on abort, and given up after a time budget with an error that tells
the model to simplify the pattern."""

from __future__ import annotations

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.child_process import ChildTimeout, run_in_child
from ink_tui.tools.grep_common import GrepMatches, GrepQuery

# Long enough for a big tree in pure Python; short enough that a runaway pattern is
# reported while the user still cares.
PYTHON_BUDGET_S = 20.0


def too_slow_error(query: GrepQuery, budget_s: float) -> ToolError:
    return ToolError(
        f"grep gave up after {budget_s:g} s: the pattern {query.pattern!r} took too long "
        "(no ripgrep here, so Python's regex engine ran it, and nested repeats such as "
        "(a+)+ can backtrack for ever). Simplify the pattern, or narrow the path or glob"
    )


async def search_python_process(
    query: GrepQuery, matches: GrepMatches, budget_s: float = PYTHON_BUDGET_S
) -> None:
    """Fill `matches` from the worker; ToolError when it fails or runs out of time."""
    request = {
        "pattern": query.pattern,
        "target": str(query.target),
        "workspace": str(query.workspace),
        "glob": query.glob,
        "ignore_case": query.ignore_case,
        "max_matches": matches.max_matches,
        "max_bytes": matches.max_bytes,
    }
    try:
        answer = await run_in_child("ink_tui.tools.grep_worker", request, budget_s, query.workspace)
    except ChildTimeout:
        raise too_slow_error(query, budget_s) from None
    if "error" in answer:
        raise ToolError(str(answer["error"]))
    matches.lines = [str(line) for line in answer["lines"]]
    matches.capped = bool(answer["capped"])
