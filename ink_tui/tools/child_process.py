"""Running blocking work that may hold the GIL in a process of its own.

Python's `re` holds the GIL for the whole of one match, and a pattern that backtracks
catastrophically (`(a+)+$` over forty `a` and a `!`; a glob such as `*a*a*a*a*a*a*b`,
which pathspec turns into a regex) takes longer than the universe has. In a thread that
froze the app, Ctrl+C included. In a child process it leaves the event loop alone and
can be killed: here on abort (the caller's `signal.scope()` cancels us and the
`finally` below kills the child's process group) and when the time budget runs out.
The child side is child_runtime.py.
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

_STDERR_KEEP = 2000


class ChildTimeout(Exception):
    """The child used up its time budget and was killed."""


def _command(module: str) -> list[str]:
    # -P: the workspace (our cwd) must not shadow a module of ours or of the stdlib.
    return [sys.executable, "-P", "-m", module, str(os.getpid())]


def _env() -> dict[str, str]:
    # The package that runs now is the one the child imports, installed or not.
    root = str(Path(ink_tui.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


async def run_in_child(
    module: str, request: dict[str, Any], budget_s: float, cwd: Path
) -> dict[str, Any]:
    """`module`'s answer to `request`; ChildTimeout after `budget_s`, ToolError if it
    failed. The child gets `budget_s` in the request for its own CPU limit."""
    process = await asyncio.create_subprocess_exec(
        *_command(module),
        cwd=cwd,
        env=_env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    data = json.dumps({**request, "budget_s": budget_s}).encode("utf-8")
    try:
        try:
            out, err = await asyncio.wait_for(process.communicate(data), budget_s)
        except TimeoutError:
            raise ChildTimeout from None
    finally:
        if process.returncode is None:
            # Aborted, cancelled or out of time: the whole group, at once.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    answer = _parse(out)
    if answer is not None:
        return answer
    if process.returncode == -signal.SIGXCPU:
        raise ChildTimeout
    detail = err.decode("utf-8", errors="replace").strip()[-_STDERR_KEEP:]
    raise ToolError(
        f"the search process failed (exit status {process.returncode})"
        + (f": {detail}" if detail else "")
    )


def _parse(out: bytes) -> dict[str, Any] | None:
    try:
        answer = json.loads(out)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None
