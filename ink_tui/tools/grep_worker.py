"""The Python grep fallback's own process: `python -P -m ink_tui.tools.grep_worker PPID`.

Why a process: see child_process.py. The request holds the query and the caps; the
answer is `{"lines": [...], "capped": bool}`, or `{"error": "..."}` for a problem the
model can fix (an invalid regex).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.child_runtime import serve
from ink_tui.tools.grep_common import GrepMatches, GrepQuery
from ink_tui.tools.grep_python import search_python


def answer(request: dict[str, Any]) -> dict[str, Any]:
    query = GrepQuery(
        pattern=request["pattern"],
        target=Path(request["target"]),
        workspace=Path(request["workspace"]),
        glob=request["glob"],
        ignore_case=request["ignore_case"],
    )
    matches = GrepMatches(query.workspace, request["max_matches"], request["max_bytes"])
    try:
        search_python(query, matches, lambda: False)
    except ToolError as error:
        return {"error": str(error)}
    return {"lines": matches.lines, "capped": matches.capped}


if __name__ == "__main__":
    serve(answer)
