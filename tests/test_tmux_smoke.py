"""A real terminal: `ink` in tmux on the offline demo, driven with send-keys.

tmux sends Alt+Enter as ESC CR (`M-Enter`), the form Textual cannot tell from Enter on
its own, so this is the test that the follow-up key works in a real terminal.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    # A whole tour in a real terminal: some 25 s under a CPU hog, more when the machine
    # is busier still. The suite's 60 s would cut it short; this only stops a hang.
    pytest.mark.timeout(240),
]


class Tmux:
    def __init__(
        self,
        workspace: Path,
        env: dict[str, str] | None = None,
        args: str = "",
        size: tuple[int, int] = (120, 40),
    ) -> None:
        self.name = f"ink-smoke-{uuid.uuid4().hex[:8]}"
        # A server of its own (-L): on the shared default server, a session started just
        # after another test killed the last one can reach a server that is shutting down
        # ("server exited unexpectedly").
        self.tmux = ["tmux", "-L", self.name]
        cleared = {
            k: "" for k in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL")
        }
        assignments = " ".join(
            f"{k}={shlex.quote(v)}" for k, v in {**cleared, **(env or {})}.items()
        )
        # exec: the pane's process is ink itself, so a test can kill it by the pane pid.
        command = f"cd {workspace} && exec env {assignments} {sys.executable} -m ink_tui {args}"
        width, height = size
        window = ["-x", str(width), "-y", str(height)]
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", self.name, *window, command],
            check=True,
            env={**os.environ, "TERM": "xterm-256color"},
        )

    def screen(self) -> str:
        done = subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
        )
        return done.stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        args = [*self.tmux, "send-keys", "-t", self.name]
        if literal:
            args.append("-l")
        subprocess.run([*args, *keys], check=True)

    def type(self, text: str) -> None:
        self.keys(text, literal=True)

    def wait_for(self, needle: str, within: float = 30.0) -> str:
        return self.wait_until(lambda screen: needle in screen, repr(needle), within)

    def wait_until(self, test: Callable[[str], bool], what: str, within: float = 30.0) -> str:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            screen = self.screen()
            if test(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{what} never appeared; screen:\n{self.screen()}")

    def alive(self) -> bool:
        done = subprocess.run([*self.tmux, "has-session", "-t", self.name], capture_output=True)
        return done.returncode == 0

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


# Tall enough that nothing the test looks for scrolls off before it is seen: the test
# may be slower than ink to look (a busy machine), and the transcript keeps moving.
SIZE = (120, 120)
QUESTION_KEYS = "Ctrl+G to answer"
# The tour's changes, each asked about before its slow command: a write and an edit of
# its notes file (with their diffs), and a plain command.
CHANGES = ("write ink-demo-notes.md", "edit ink-demo-notes.md", "bash ls -la")


def allow_the_changes(tmux: Tmux) -> None:
    """Answer the tour's questions about its changes, each with Ctrl+G and y; each
    offers "this session" and "always" too (the plain command: for `ls` commands)."""
    for label in CHANGES:
        tmux.wait_for(f"{label}  waiting for your answer", within=60)
        tmux.keys("C-g")
        screen = tmux.wait_until(
            lambda s: "[y] allow once" in s and "[a] always allow" in s, "the choices"
        )
        assert "[s] allow" in screen and "this session" in screen
        if label.startswith("bash"):
            assert "[a] always allow `ls` commands" in screen
        tmux.keys("y")


@pytest.fixture
def tmux(workspace: Path, tmp_path: Path) -> Iterator[Tmux]:
    # Sessions and config go to the test's folder, never the real home.
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    session = Tmux(workspace, env=env, size=SIZE)
    try:
        yield session
    finally:
        session.close()


def test_submit_steer_follow_up_and_interrupt_in_a_real_terminal(tmux: Tmux) -> None:
    tmux.wait_for("demo model (offline)")

    # Submit: the demo starts its tour with real tools.
    tmux.type("tour the project")
    tmux.keys("Enter")
    tmux.wait_for("offline demo model")

    # The changes ask first (the default approval policy), then the slow shell command.
    # (Typing while it waits: test_tmux_approval.py.)
    allow_the_changes(tmux)
    tmux.wait_for("sleeps for 2 seconds")
    tmux.wait_for(QUESTION_KEYS)
    # Follow-up with Alt+Enter (tmux sends ESC CR). The run waits for the answer, so the
    # follow-up is surely still in the queue list (below its "Queued" header) when the
    # screen is read.
    tmux.type("list the docs")
    tmux.keys("M-Enter")

    def queued(screen: str) -> bool:
        return "Queued ·" in screen and "follow-up  list the docs" in screen.split("Queued ·")[-1]

    tmux.wait_until(queued, "the queued follow-up")

    # Ctrl+G moves to the question, y allows it once.
    tmux.keys("C-g")
    tmux.wait_for("[y] allow once")
    tmux.keys("y")
    # What is typed right after the answer goes to the input, whole and in order.
    # Steer while it works: Enter queues a steer that the next reply quotes.
    tmux.type("mind the tests")
    tmux.keys("Enter")

    # Both enter the history labelled; the demo quotes each (a markdown quote: "▌").
    tmux.wait_for("steer  mind the tests")
    tmux.wait_for("▌ mind the tests")
    tmux.wait_for("follow-up  list the docs")
    tmux.wait_for("▌ list the docs")
    # The follow-up came after everything else; once it is done, ink is idle.
    tmux.wait_for("idle")

    # Interrupt: a queued entry comes back into the editor. The run waits on its shell
    # command's question, so the steer stays queued until Ctrl+C.
    tmux.wait_until(lambda screen: QUESTION_KEYS not in screen, "the first question to close")
    tmux.type("another tour")
    tmux.keys("Enter")
    tmux.wait_for(QUESTION_KEYS, within=60)
    tmux.type("queued while running")
    tmux.keys("Enter")
    tmux.wait_for("Queued · 1")
    tmux.keys("C-c")
    tmux.wait_for("Restored 1 queued input to the editor.")
    tmux.wait_for("idle")
    # The restored text is in the input box, not sent.
    assert "queued while running" in tmux.screen().split("Restored 1 queued input")[-1]

    # Quit: Ctrl+C clears the editor, then twice on an empty editor quits. One write:
    # read together, no stall of the machine falls between the last two and the 2 s
    # quit window.
    tmux.keys("C-c", "C-c", "C-c")
    deadline = time.monotonic() + 30
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tmux.alive()
