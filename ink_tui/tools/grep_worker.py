"""The Python grep fallback's own process: `python -P -m ink_tui.tools.grep_worker PPID`.

Why a process and not a thread: `re` holds the GIL for the whole of one match, and a
pattern that backtracks catastrophically (`(a+)+$` over a line of forty `a` and a `!`)
takes longer than the universe has. In a thread that froze the app, Ctrl+C included; a
process leaves the event loop alone and can be killed.

Protocol: the request is one JSON object on stdin (the query and the caps), the answer one
JSON object on stdout: `{"lines": [...], "capped": bool}` or `{"error": "..."}` for a
problem the model can fix (an invalid regex).

The parent kills this process (its own process group) on abort and when the time budget
runs out. Two nets catch the cases where it cannot: the process dies with its parent
(PR_SET_PDEATHSIG, Linux) and once it has used its CPU budget (RLIMIT_CPU), so a parent
that exits at once (a second Ctrl+C) leaves nothing spinning.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.grep_common import GrepMatches, GrepQuery

_PR_SET_PDEATHSIG = 1
# CPU seconds allowed beyond the parent's wall-clock budget before the kernel kills us.
_CPU_MARGIN_S = 5


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The parent may have died before the line above took effect.
    if os.getppid() != parent:
        os._exit(1)


def _limit_cpu(budget_s: float) -> None:
    seconds = int(budget_s) + _CPU_MARGIN_S
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))


def answer(request: dict[str, Any]) -> dict[str, Any]:
    # Imported here so that a failed import is reported like any other failure.
    from ink_tui.tools.grep_python import search_python

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


def main() -> None:
    _die_with_parent(int(sys.argv[1]))
    request = json.loads(sys.stdin.buffer.read())
    _limit_cpu(float(request["budget_s"]))
    sys.stdout.write(json.dumps(answer(request)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
