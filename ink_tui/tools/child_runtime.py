"""The child side of work done in a process of its own (see child_process.py).

`python -P -m <worker module> PPID`: the request is one JSON object on stdin, the answer
one JSON object on stdout. Two nets catch the cases where the parent cannot kill us: we
die with the parent (PR_SET_PDEATHSIG, Linux), and once we have used our CPU budget
(RLIMIT_CPU, the request's `budget_s` plus a margin), so a parent that exits at once (a
second Ctrl+C) leaves nothing spinning.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1
# CPU seconds allowed beyond the parent's wall-clock budget before the kernel kills us.
_CPU_MARGIN_S = 5


def serve(answer: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    _die_with_parent(int(sys.argv[1]))
    request = json.loads(sys.stdin.buffer.read())
    _limit_cpu(float(request["budget_s"]))
    sys.stdout.write(json.dumps(answer(request)))
    sys.stdout.flush()


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
