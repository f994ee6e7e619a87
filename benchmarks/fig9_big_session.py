"""Figure 9, a big session resumed: the memory `ink -r ID` holds for a 50 MB session file,
and at its peak while the next request (the whole history) is built and sent.

A session of about `FULL_BYTES` (prompts, answers, `read` and `bash` calls whose results
are 20 to 60 KB each: `fig9_session`) is written through the real session writer into an
empty home of its own. Each run then starts the real `ink -r ID` (`python -m ink_tui`),
pointed at a loopback scripted server (`fig9_server`), under a pseudo-terminal of figure
1's size, and:

1. waits until the session's last message is on the terminal (`LAST_WORD`): `resume_ms`
   from the spawn;
2. waits for the process to settle (its RSS still for `SETTLE_S`), then reads `VmRSS`
   from /proc: `rss_resumed_mib`;
3. types a prompt and Enter, so the app builds the next request from the whole history
   and sends it; waits until the server's reply is on the terminal (`REPLY_WORD`) and the
   process settles again, then reads `VmHWM`, the most it was ever resident:
   `peak_rss_mib` (which covers the resume too).

The server checks what it got: the run fails unless the request carried every message of
the history (so the figure cannot pass by sending less). Between runs the session file is
cut back to what was written (the run appended the new prompt and reply) and the other
files beside it go, so every run resumes the same file.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, Sample, median
from benchmarks.fig9_server import REPLY_WORD, Fig9Server
from benchmarks.fig9_session import LAST_WORD
from benchmarks.pty_app import PtyApp
from benchmarks.session_home import SessionHome

FULL_BYTES = 50_000_000
QUICK_BYTES = 2_000_000
PROMPT = "Sum up what the last turns changed."
SHOW_TIMEOUT_S = 90.0
REPLY_TIMEOUT_S = 90.0
# Settled: RSS moved less than SETTLE_MIB over the last SETTLE_S (at most SETTLE_MAX_S).
SETTLE_S = 1.0
SETTLE_MIB = 1.0
SETTLE_MAX_S = 20.0
_POLL_S = 0.1


def _status_mib(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for process {pid}")


class _App(PtyApp):
    def send(self, text: str) -> None:
        os.write(self._master, text.encode())

    def settle(self) -> float:
        """Keep reading the terminal until the RSS holds still; the RSS then (MiB)."""
        pid = self.proc.pid
        seen: list[tuple[float, float]] = []
        deadline = time.monotonic() + SETTLE_MAX_S
        while True:
            now = time.monotonic()
            seen.append((now, _status_mib(pid, "VmRSS")))
            window = [rss for at, rss in seen if at >= now - SETTLE_S]
            held = seen[0][0] <= now - SETTLE_S
            if (held and max(window) - min(window) < SETTLE_MIB) or now > deadline:
                return seen[-1][1]
            self._read(now + _POLL_S)


class _Home(SessionHome):
    def __init__(self, root: Path, size: int) -> None:
        super().__init__(root, "benchmarks.fig9_session", size)

    def start(self, url: str) -> _App:
        command = [sys.executable, "-m", "ink_tui", "-C", str(self.workspace)]
        command += ["--base-url", url, "--model", "bench-model", "-r", self.id]
        return _App(command, self.env, REPO_ROOT)

    def restore(self) -> None:
        """The session file as it was written, and nothing else beside it."""
        self.remove_all_but_the_session()
        os.truncate(self.session, self.size)


def run_once(home: _Home, server: Fig9Server) -> Sample:
    app = home.start(server.url)
    try:
        shown = app.wait_for(LAST_WORD, SHOW_TIMEOUT_S)
        resumed = app.settle()
        since = len(app.output)
        app.send(PROMPT)
        app.send("\r")
        app.wait_for(REPLY_WORD, REPLY_TIMEOUT_S, since=since)
        app.settle()
        peak = _status_mib(app.proc.pid, "VmHWM")
    finally:
        app.stop()
        home.restore()
    request = server.log()[-1]
    # The history, the system prompt and the new prompt: everything must have been sent.
    if request["messages"] < home.messages + 2:
        raise RuntimeError(
            f"the request carried {request['messages']} messages; the history holds {home.messages}"
        )
    return {
        "resume_ms": (shown - app.started) * 1000,
        "rss_resumed_mib": resumed,
        "peak_rss_mib": peak,
        "sent_mb": request["bytes"] / 1e6,
    }


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    size = QUICK_BYTES if quick else FULL_BYTES
    samples: dict[str, list[Any]] = {"run": [], "session": []}
    with tempfile.TemporaryDirectory(prefix="ink-bench-big-") as tmp:
        home = _Home(Path(tmp), size)
        with Fig9Server() as server:
            for _ in range(runs):
                samples["run"].append(run_once(home, server))
                samples["session"].append({"messages": home.messages, "bytes": home.size})
    return samples


def summarize(samples: dict[str, list[Any]]) -> dict[str, Any]:
    runs, session = samples["run"], samples["session"]
    return {
        "file_mb": median([s["bytes"] / 1e6 for s in session]),
        "messages": median([s["messages"] for s in session]),
        "rss_resumed_mib": median([r["rss_resumed_mib"] for r in runs]),
        "peak_rss_mib": median([r["peak_rss_mib"] for r in runs]),
        "resume_ms": median([r["resume_ms"] for r in runs]),
    }
