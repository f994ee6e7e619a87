"""A real terminal: typing while the demo's approval question is open never answers it.

`ink` runs in tmux on the offline demo (approval policy `ask`, the default), whose tour
ends with a shell command that asks first (after its changes, allowed here). With the
question open, "now stop" typed a key at a time (a person) and " yes do it" sent at
once (a burst, as a paste without bracketed paste arrives) end up in the input, whole,
and the question stays open; then Ctrl+G and y allow the command.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_tmux_smoke import Tmux, allow_the_changes

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    # A whole tour in a real terminal: some 25 s under a CPU hog, more when the machine
    # is busier still. The suite's 60 s would cut it short; this only stops a hang.
    pytest.mark.timeout(240),
]

QUESTION_KEYS = "Ctrl+G to answer"


@pytest.fixture
def tmux(workspace: Path, tmp_path: Path) -> Iterator[Tmux]:
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    session = Tmux(workspace, env=env)
    try:
        yield session
    finally:
        session.close()


def input_holds(screen: str, text: str) -> bool:
    """`text` is on a line below the question (in the input box), not in the transcript."""
    lines = screen.splitlines()
    asked = [i for i, line in enumerate(lines) if QUESTION_KEYS in line]
    typed = [i for i, line in enumerate(lines) if text in line]
    return bool(asked and typed) and typed[-1] > asked[-1]


def test_typing_at_human_speed_and_in_a_burst_never_answers_the_question(tmux: Tmux) -> None:
    tmux.wait_for("demo model (offline)")
    tmux.type("tour the project")
    tmux.keys("Enter")
    allow_the_changes(tmux)  # the write, the edit and the plain command before it
    tmux.wait_for("sleeps for 2 seconds", within=60)
    screen = tmux.wait_for(QUESTION_KEYS, within=30)
    assert "waiting for your answer" in screen

    # A person typing: one key at a time. (The pauses only pace the keys; what is
    # checked waits for the screen.)
    for character in "now stop":
        tmux.type(character)
        time.sleep(0.12)
    screen = tmux.wait_until(lambda s: input_holds(s, "now stop"), "'now stop' in the input")
    assert QUESTION_KEYS in screen and "waiting for your answer" in screen
    assert "Why not?" not in screen  # no reason box: "n" did not deny

    # A burst: every key in one write.
    tmux.type(" yes do it")
    screen = tmux.wait_until(
        lambda s: input_holds(s, "now stop yes do it"), "'now stop yes do it' in the input"
    )
    assert QUESTION_KEYS in screen and "waiting for your answer" in screen
    assert '✓ bash echo "counting' not in screen  # not allowed by the "y"

    # Answering is deliberate: Ctrl+G, then y.
    tmux.keys("C-g")
    tmux.wait_for("[y] allow once")
    tmux.keys("y")
    # The run ends: the command ran (the demo's summary says what it counted; only a
    # command that ran counts), and ink is idle.
    screen = tmux.wait_until(idle, "ink to be idle again", within=60)
    assert QUESTION_KEYS not in screen and "wc -l counted" in screen
    # What was typed is still there, unsent, in the input (below the transcript).
    assert "now stop yes do it" in screen.split("wc -l counted")[-1]
    assert "already answered" not in screen


def idle(screen: str) -> bool:
    return any("demo model" in line and "idle" in line for line in screen.splitlines())
