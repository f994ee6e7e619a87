"""Running the Python grep fallback in a child process (see grep_worker.py for why).

The child runs in a process group of its own; it is killed when the abort signal fires
(the caller's `signal.scope()` cancels us, and the `finally` below kills) and when the
time budget runs out, which becomes an error result telling the model to simplify the
pattern. The event loop only waits on pipes, so nothing the regex does can freeze it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import ink_tui
from ink_tui.core.tool_api import ToolError
from ink_tui.tools.grep_common import GrepMatches, GrepQuery

# Long enough for a big tree in pure Python; short enough that a runaway pattern is
# reported while the user still cares.
PYTHON_BUDGET_S = 20.0
_STDERR_KEEP = 2000


def worker_command() -> list[str]:
    # -P: the workspace (our cwd) must not shadow a module of ours or of the stdlib.
    return [sys.executable, "-P", "-m", "ink_tui.tools.grep_worker", str(os.getpid())]


def _worker_env() -> dict[str, str]:
    # The package that runs now is the one the child imports, installed or not.
    root = str(Path(ink_tui.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _request(query: GrepQuery, matches: GrepMatches, budget_s: float) -> bytes:
    request: dict[str, Any] = {
        "pattern": query.pattern,
        "target": str(query.target),
        "workspace": str(query.workspace),
        "glob": query.glob,
        "ignore_case": query.ignore_case,
        "max_matches": matches.max_matches,
        "max_bytes": matches.max_bytes,
        "budget_s": budget_s,
    }
    return json.dumps(request).encode("utf-8")


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
    process = await asyncio.create_subprocess_exec(
        *worker_command(),
        cwd=query.workspace,
        env=_worker_env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        try:
            out, err = await asyncio.wait_for(
                process.communicate(_request(query, matches, budget_s)), budget_s
            )
        except TimeoutError:
            raise too_slow_error(query, budget_s) from None
    finally:
        if process.returncode is None:
            # Aborted, cancelled or out of time: the whole group, at once.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    answer = _parse(out)
    if answer is None:
        if process.returncode == -signal.SIGXCPU:
            raise too_slow_error(query, budget_s)
        detail = err.decode("utf-8", errors="replace").strip()[-_STDERR_KEEP:]
        raise ToolError(
            f"grep's Python fallback failed (exit status {process.returncode})"
            + (f": {detail}" if detail else "")
        )
    if "error" in answer:
        raise ToolError(str(answer["error"]))
    matches.lines = [str(line) for line in answer["lines"]]
    matches.capped = bool(answer["capped"])


def _parse(out: bytes) -> dict[str, Any] | None:
    try:
        answer = json.loads(out)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None
