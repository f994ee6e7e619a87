"""Small shared pieces: statistics, memory, and running one measured run in a child process.

Every measured run is a fresh `python -m benchmarks.<figure> ...` process that writes one
JSON object to the file named by `--out`; the runner takes the median over runs.
"""

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent

Sample = dict[str, Any]

# Variables that would point `ink` at a real model, a proxy or a user's config, or keep
# Python from writing byte-code caches (a start would then compile every module: an
# installed `ink` does not pay that).
_SCRUBBED_PREFIXES = ("INK_", "OPENAI_")
_SCRUBBED_NAMES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "pythondontwritebytecode"}


class ChildFailed(RuntimeError):
    """A measured run exited with an error or wrote no result."""


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else math.nan


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linearly interpolated between the nearest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def rss_mib(pid: int | None = None) -> float:
    """Resident set size of `pid` (default: this process) in MiB, from /proc."""
    path = Path(f"/proc/{pid or 'self'}/status")
    for line in path.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS in {path}")


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a measured process: no model, proxy or user config leaks in."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(_SCRUBBED_PREFIXES) and name.lower() not in _SCRUBBED_NAMES
    }
    env["NO_PROXY"] = "127.0.0.1,localhost"
    # Byte-code caches written, as on a user's machine: with this set (some shells and CI
    # images set it), a module changed since its cache was last written is compiled again
    # on every start, and figure 1 measured the compiler.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if part
    )
    # The one ink setting a pass chooses (fast paths off, for "What the fast paths buy"):
    # scrubbed with the rest, every child of an off pass measured them on.
    if "INK_NO_FAST_PATHS" in os.environ:
        env["INK_NO_FAST_PATHS"] = os.environ["INK_NO_FAST_PATHS"]
    env.update(extra)
    return env


def isolated_home(root: Path) -> dict[str, str]:
    """Variables that give a measured process an empty home: no user config or sessions."""
    return {
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"),
    }


def run_child(module: str, args: Sequence[str], *, timeout: float = 300.0) -> Sample:
    """Run `python -m benchmarks.<module> --out FILE ARGS...` and return what it wrote."""
    with tempfile.TemporaryDirectory(prefix="ink-bench-") as tmp:
        out = Path(tmp) / "result.json"
        command = [sys.executable, "-m", f"benchmarks.{module}", "--out", str(out), *args]
        proc = subprocess.run(
            command,
            cwd=REPO_ROOT,
            env=child_env(**isolated_home(Path(tmp))),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0 or not out.exists():
            raise ChildFailed(
                f"{' '.join(command[1:])} exited with {proc.returncode}:\n"
                f"{proc.stderr[-4000:]}{proc.stdout[-2000:]}"
            )
        return json.loads(out.read_text())


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")


def start_ink(
    args: Sequence[str], tmp: Path, profile: Path | None = None, **popen: Any
) -> subprocess.Popen[Any]:
    """A real `ink ARGS` in `tmp/workspace` with an empty home of its own (`tmp/home`),
    under cProfile writing to `profile` when one is given."""
    workspace = tmp / "workspace"
    workspace.mkdir()
    python = [sys.executable]
    if profile is not None:
        python += ["-m", "cProfile", "-o", str(profile)]
    return subprocess.Popen(
        [*python, "-m", "ink_tui", *args],
        cwd=workspace,
        env=child_env(**isolated_home(tmp / "home")),
        **popen,
    )


class ServerProcess:
    """A benchmark server in a child process (`_proc`), stopped on `close()` or on
    leaving a `with` block."""

    _proc: subprocess.Popen[Any]
    root: str

    def start(self, module: str, *args: str, what: str) -> None:
        """Run `python -m MODULE ARGS`; it prints `PORT n` once it listens."""
        self._proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=REPO_ROOT,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line.startswith("PORT "):
            self._proc.kill()
            raise RuntimeError(f"the {what} did not start: {line!r}")
        self.root = f"http://127.0.0.1:{int(line.split()[1])}"

    def close(self) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def interruptible() -> None:
    """In the server's child before exec: Ctrl+C as in a terminal's foreground.

    A benchmark started in the background (`python -m benchmarks ... &` from a script,
    CI's background jobs) has SIGINT ignored, as a shell does for its background jobs;
    its children inherit that, and `ink serve` leaves a signal ignored at start ignored
    (`serve/stopping.py`, for `nohup`). `close()`'s SIGINT then did nothing and the server
    was killed 30 s later: the "does not exit within 30 s of Ctrl+C" of full passes."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
