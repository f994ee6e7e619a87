"""Figure 1, first screen: process start to first frame, and memory, for `ink` and a bare app.

Each run spawns `python -m benchmarks.first_frame_child` under a pseudo-terminal of 100x32
(Textual's real Linux driver, as in a terminal), once for `ink` (`python -m ink_tui`, the
offline demo model) and once for the baseline, a bare Textual app with one Static and one
Input, alternating (after one untimed start of each, which writes the byte-code caches).
The time runs from just before the spawn to the child's first frame;
the parent also checks that the frame reached the terminal (a word of it is read back from
the pty). RSS is taken at the first frame and again `IDLE_S` later (ink has built its
controller by then: that is the idle figure). Lazy imports: the `ink_tui` modules loaded at
the first frame must include nothing of the providers, tools or session store, and no
HTTP or schema library.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import time
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, Sample, child_env, isolated_home, median
from benchmarks.pty_app import _ANSI, COLUMNS, ROWS, PtyApp

IDLE_S = 1.0
QUICK_IDLE_S = 0.3
TIMEOUT_S = 30.0
# A word of each app's first frame, to confirm it reached the terminal.
MARKERS = {"ink": "demo model (offline)", "bare": "bare baseline ready"}
# Loaded before the first frame, any of these is a lazy-import failure...
FORBIDDEN_PREFIXES = ("ink_tui.providers", "ink_tui.tools", "ink_tui.session")
# ... except configuration, which is read to choose the front end and the model: the
# package itself and its config modules (by last name component), among them the
# project-file trust check, which decides which of a workspace's settings apply.
ALLOWED_PACKAGES = ("ink_tui.session",)
CONFIG_MODULES = ("config", "config_*", "model_*", "api_keys", "project_trust")


def eager_imports(modules: list[str], heavy: list[str]) -> list[str]:
    """What the first frame loaded that it should not have."""
    bad = [
        name
        for name in modules
        if name.startswith(FORBIDDEN_PREFIXES)
        and name not in ALLOWED_PACKAGES
        and not any(fnmatch(name.rsplit(".", 1)[-1], pattern) for pattern in CONFIG_MODULES)
    ]
    return bad + heavy


def run_once(kind: str, idle_s: float) -> Sample:
    with tempfile.TemporaryDirectory(prefix="ink-bench-ff-") as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "README.md").write_text("# Sample\n")
        out = root / "result.json"
        env = child_env(
            TERM="xterm-256color",
            COLORTERM="truecolor",
            **isolated_home(root),
            LINES=str(ROWS),
            COLUMNS=str(COLUMNS),
        )
        command = [
            sys.executable,
            "-m",
            "benchmarks.first_frame_child",
            kind,
            str(out),
            str(idle_s),
            str(workspace),
        ]
        seen_at, output, code, started = _run_in_pty(command, env, MARKERS[kind].encode())
        if code != 0 or not out.exists():
            text = _ANSI.sub(b"", output).decode("utf-8", "replace")
            raise RuntimeError(f"{kind}: first-frame child exited with {code}:\n{text[-3000:]}")
        child: dict[str, Any] = json.loads(out.read_text())
    frame = child["modules_frame"]
    return {
        "first_frame_ms": (child["frame_t"] - started) * 1000,
        "on_terminal_ms": None if seen_at is None else (seen_at - started) * 1000,
        "rss_frame_mib": child["rss_frame"],
        "rss_idle_mib": child["rss_idle"],
        "eager": eager_imports(frame["ink_tui"], frame["heavy"]),
        "ink_modules_at_frame": len(frame["ink_tui"]),
        "modules_at_frame": int(frame["count"][0]),
        "modules_idle": int(child["modules_idle"]["count"][0]),
    }


def _run_in_pty(
    command: list[str], env: dict[str, str], marker: bytes
) -> tuple[float | None, bytes, int, float]:
    """Run under a fresh pty; returns (when `marker` was read, output, exit code, start)."""
    app = PtyApp(command, env, REPO_ROOT)
    deadline = app.started + TIMEOUT_S
    seen_at: float | None = None
    with contextlib.suppress(TimeoutError):  # the caller reports the output
        seen_at = app.wait_for(marker.decode(), TIMEOUT_S)
    app.read_to_end(deadline)
    try:
        code = app.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        app.proc.kill()
        code = app.proc.wait()
    app.stop()
    return seen_at, bytes(app.output), code, app.started


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    idle_s = QUICK_IDLE_S if quick else IDLE_S
    samples: dict[str, list[Any]] = {"ink": [], "bare": []}
    # One untimed start of each first: it writes the byte-code caches.
    if not quick:
        run_once("bare", idle_s)
        run_once("ink", idle_s)
    for _ in range(runs):
        samples["bare"].append(run_once("bare", idle_s))
        samples["ink"].append(run_once("ink", idle_s))
    return samples


def summarize(samples: dict[str, list[Any]]) -> dict[str, Any]:
    ink, bare = samples["ink"], samples["bare"]
    eager = sorted({name for sample in ink for name in sample["eager"]})
    return {
        "ink_ms": median([s["first_frame_ms"] for s in ink]),
        "bare_ms": median([s["first_frame_ms"] for s in bare]),
        "ratio": median(
            [i["first_frame_ms"] / b["first_frame_ms"] for i, b in zip(ink, bare, strict=True)]
        ),
        "ink_rss_frame_mib": median([s["rss_frame_mib"] for s in ink]),
        "bare_rss_frame_mib": median([s["rss_frame_mib"] for s in bare]),
        "ink_rss_idle_mib": median([s["rss_idle_mib"] for s in ink]),
        "bare_rss_idle_mib": median([s["rss_idle_mib"] for s in bare]),
        "eager_imports": len(eager),
        "eager_import_names": eager,
        "ink_modules_at_frame": median([s["ink_modules_at_frame"] for s in ink]),
    }
