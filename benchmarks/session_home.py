"""A saved session for a figure to resume: its isolated home, and what its builders share.

Figures 8 and 9 each write a session through the real `SessionWriter` (in a child
process: `python -m benchmarks.fig8_session` or `fig9_session`) into an empty home, then
start `ink` on it in a pty as often as they run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, child_env, isolated_home
from benchmarks.fig1_first_screen import COLUMNS, ROWS


class SessionHome:
    """The isolated home, its workspace and the session `builder` wrote for `amount`."""

    def __init__(self, root: Path, builder: str, amount: int) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.workspace.mkdir()
        self.env = child_env(
            TERM="xterm-256color",
            COLORTERM="truecolor",
            **isolated_home(root),
            LINES=str(ROWS),
            COLUMNS=str(COLUMNS),
        )
        out = root / "session.json"
        subprocess.run(
            [sys.executable, "-m", builder, str(self.workspace), str(amount), str(out)],
            cwd=REPO_ROOT,
            env=self.env,
            check=True,
            timeout=300,
        )
        made = json.loads(out.read_text())
        self.session = Path(made["path"])
        self.id: str = made["id"]
        self.messages: int = made["messages"]
        self.size: int = made["bytes"]

    def remove_all_but_the_session(self) -> None:
        for path in self.session.parent.iterdir():
            if path != self.session:
                path.unlink()


def bash_details(output: str, lines: int, pgid: int) -> dict[str, Any]:
    """The details the `bash` tool records with a whole, finished result."""
    return {
        "exit_code": 0,
        "full_output_path": None,
        "truncated": False,
        "timed_out": False,
        "interrupted": False,
        "lines": lines,
        "bytes": len(output.encode()),
        "shown": lines,
        "total": lines,
        "pgid": pgid,
    }
