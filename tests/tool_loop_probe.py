"""Run one tool call in a process of its own and report how the event loop fared.

`python -m tests.tool_loop_probe SPEC` (SPEC is JSON: tool, args, workspace, abort_after,
use_ripgrep) prints one JSON line: the longest gap between heartbeats that was the loop's
own (not a busy machine's: see loop_heartbeat.py; `max_gap_raw` is the plain one), how
long the call took to end after the abort, and how it ended. A separate process because a tool that
starves the loop would freeze the test run itself: the caller gives up after a timeout
and reports that instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.tool_api import Tool, ToolContext, ToolError
from tests.loop_heartbeat import TICK_S, Heartbeat

HEARTBEAT_S = TICK_S
ROOT = Path(__file__).resolve().parent.parent
# The probe reports within a second or two unless its event loop is starved.
PROBE_TIMEOUT_S = 15


def run_probe(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The probe's report, or None when it did not report in time (the loop froze)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.tool_loop_probe", json.dumps(spec)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return None
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _tool(spec: dict[str, Any]) -> Tool:
    if spec["tool"] == "grep":
        from ink_tui.tools.grep import GrepTool

        return GrepTool(use_ripgrep=spec.get("use_ripgrep"))
    if spec["tool"] == "find" and "budget_s" in spec:
        from ink_tui.tools.find import FindTool

        return FindTool(budget_s=spec["budget_s"])
    from ink_tui.tools import default_tools

    return next(tool for tool in default_tools() if tool.name == spec["tool"])


async def probe(spec: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    abort = AbortController()
    ctx = ToolContext(Path(spec["workspace"]), abort.signal)
    heartbeat = Heartbeat()
    heartbeat.start()
    call = asyncio.create_task(_tool(spec).execute(spec["args"], ctx))
    await asyncio.sleep(spec["abort_after"])
    aborted_at = loop.time()
    abort.abort("probe abort")
    try:
        result = await call
        outcome = "error" if result.is_error else "result"
        text = result.content
    except AbortError:
        outcome, text = "aborted", ""
    except ToolError as error:
        outcome, text = "tool_error", str(error)
    ended = loop.time()
    await heartbeat.stop()
    return {
        "max_gap": HEARTBEAT_S + heartbeat.worst if heartbeat.ticks else float("inf"),
        "max_gap_raw": HEARTBEAT_S + heartbeat.worst_raw if heartbeat.ticks else float("inf"),
        "beats": heartbeat.ticks,
        "abort_to_end": ended - aborted_at,
        "outcome": outcome,
        "text": text[:500],
    }


def main() -> None:
    report = asyncio.run(probe(json.loads(sys.argv[1])))
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    # A thread left running by a tool must not keep this process alive.
    os._exit(0)


if __name__ == "__main__":
    main()
