"""Running a benchmark module as a user would, for the tests of the benchmarks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def run_benchmark(module: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`python -m <module> <args>` from the repository; fails the test unless it exits 0."""
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc
