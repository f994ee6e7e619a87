"""Figure 8, resume: `ink -r ID` of a 20,000-message session against a fresh `ink`.

A session of `FULL_MESSAGES` messages (prompts, markdown answers, `bash` calls with
multi-line results: `fig8_session`) is written through the real session writer into an
empty home of its own. Each run then starts, under a pseudo-terminal of figure 1's size
and the way figure 1 starts it (`first_frame_child`, the offline demo model):

- `ink` with no session: fresh, timed from the spawn to its first frame on the terminal
  (the status bar's "demo model (offline)" read back from the pty);
- `ink -r ID`: resume, timed from the spawn until the session's last message is on the
  terminal (`LAST_WORD`, which only the last message holds).

Right after each shows, a key (`KEY`, which nothing else on screen holds) is typed into
the terminal, and the time until the app draws it in the input box is read back: typing
must work at once, while whatever is not on screen is still being built.

Between starts the session folder is put back as it was (the fresh start's new session,
the resumed one's saved draft and lock go; the session file itself is checked unchanged),
so every run resumes the same file. In full mode one untimed start of each comes first
(it writes the byte-code caches and reads the file into the page cache, as a second
`ink -r` would find it). The ratio is resume / fresh per run, then the median.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, Sample, median
from benchmarks.fig1_first_screen import MARKERS
from benchmarks.fig8_session import LAST_WORD
from benchmarks.pty_app import PtyApp
from benchmarks.session_home import SessionHome

FULL_MESSAGES = 20_000
QUICK_MESSAGES = 200
KEY = "§"
SHOW_TIMEOUT_S = 60.0
KEY_TIMEOUT_S = 10.0
# The child would leave by itself this long after its first frame; the figure stops it
# as soon as it has measured.
HOLD_S = 120.0


class _Home(SessionHome):
    def __init__(self, root: Path, messages: int) -> None:
        super().__init__(root, "benchmarks.fig8_session", messages)

    def start(self, *flags: str) -> PtyApp:
        command = [
            sys.executable,
            "-m",
            "benchmarks.first_frame_child",
            "ink",
            str(self.root / "child.json"),
            str(HOLD_S),
            str(self.workspace),
            *flags,
        ]
        return PtyApp(command, self.env, REPO_ROOT)

    def restore(self) -> None:
        """Only the session file stays in its folder, exactly as it was written."""
        self.remove_all_but_the_session()
        if self.session.stat().st_size != self.size:
            raise RuntimeError(f"the resumed session {self.session} was changed by a run")


def run_once(home: _Home, flags: tuple[str, ...], marker: str) -> Sample:
    app = home.start(*flags)
    try:
        shown = app.wait_for(marker, SHOW_TIMEOUT_S)
        key_s = app.type_key(KEY, KEY_TIMEOUT_S)
    finally:
        app.stop()
        home.restore()
    return {"shown_ms": (shown - app.started) * 1000, "first_key_ms": key_s * 1000}


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    messages = QUICK_MESSAGES if quick else FULL_MESSAGES
    samples: dict[str, list[Any]] = {"fresh": [], "resume": [], "session": []}
    with tempfile.TemporaryDirectory(prefix="ink-bench-resume-") as tmp:
        home = _Home(Path(tmp), messages)
        fresh: tuple[str, ...] = ()
        resume = ("-r", home.id)
        if not quick:
            run_once(home, fresh, MARKERS["ink"])
            run_once(home, resume, LAST_WORD)
        for _ in range(runs):
            samples["fresh"].append(run_once(home, fresh, MARKERS["ink"]))
            samples["resume"].append(run_once(home, resume, LAST_WORD))
            samples["session"].append({"messages": home.messages, "bytes": home.size})
    return samples


def summarize(samples: dict[str, list[Any]]) -> dict[str, Any]:
    fresh, resume, session = samples["fresh"], samples["resume"], samples["session"]
    keys = [s["first_key_ms"] for s in resume]
    return {
        "resume_ms": median([s["shown_ms"] for s in resume]),
        "fresh_ms": median([s["shown_ms"] for s in fresh]),
        "ratio": median(
            [r["shown_ms"] / f["shown_ms"] for r, f in zip(resume, fresh, strict=True)]
        ),
        "first_key_ms": median(keys),
        "first_key_max_ms": max(keys),
        "messages": median([s["messages"] for s in session]),
        "file_mb": median([s["bytes"] / 1e6 for s in session]),
    }
