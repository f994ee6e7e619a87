"""The real `ink` on a pseudo-terminal: a `!` command's long output folds to its last
lines under the count of those above; a short one is drawn whole. In tmux (the screen as
drawn): an edit's folded diff shows its changed line, not the context above it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pty_terminal import PtyInk
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.test_tmux_smoke import Tmux

MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}


@pytest.fixture
def ink(workspace: Path, tmp_path: Path) -> Iterator[PtyInk]:
    # No model configured (the offline demo); sessions and config in the test's folder.
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    terminal = PtyInk([], cwd=workspace, env=env, size=(100, 32))
    try:
        terminal.wait_for("idle", within=60)
        yield terminal
    finally:
        terminal.close()


def test_a_long_command_output_folds_to_its_last_lines(ink: PtyInk) -> None:
    start = ink.mark()
    ink.send(b"!seq 1 500\r")
    ink.wait_for("495 lines above", within=30, since=start)
    ink.wait_for("exit code 0", within=30, since=start)
    drawn = ink.text(start)
    after = drawn[drawn.index("495 lines above") :]
    for number in range(496, 501):
        assert str(number) in after
    # The start of the output is never drawn: only its last lines are.
    assert "\n1\n" not in drawn and "\n100\n" not in drawn and "250" not in drawn


def test_a_short_command_output_is_drawn_whole(ink: PtyInk) -> None:
    start = ink.mark()
    ink.send(b"!printf 'alpha\\nbeta\\ngamma\\ndelta\\nepsilon\\nzeta\\neta\\n'\r")
    ink.wait_for("exit code 0", within=30, since=start)
    ink.wait_for("eta", within=30, since=start)
    drawn = ink.text(start)
    for word in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta"):
        assert word in drawn
    assert "more lines" not in drawn and "lines above" not in drawn


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_an_edits_folded_diff_on_screen_shows_the_changed_line(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    edit = {"path": "notes.txt", "edits": [{"old_text": "line 20\n", "new_text": "LINE 20\n"}]}
    server.push(tool_reply([("edit", edit)]), text_reply("Changed it."))
    env = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "INK_APPROVAL": "auto",
    }
    tmux = Tmux(workspace, env=env, args=f"--base-url {server.base_url} --model m")
    try:
        tmux.wait_for("Alt+Enter")
        tmux.type("change line 20")
        tmux.keys("Enter")
        screen = tmux.wait_for("Changed it.")
        lines = [line.strip() for line in screen.splitlines()]
        start = next(n for n, line in enumerate(lines) if line.startswith("✓ edit notes.txt"))
        assert lines[start + 1 : start + 7] == [
            "@@ -17,7 +17,7 @@",
            "line 19",
            "-line 20",
            "+LINE 20",
            "line 21",
            "+4 more lines",
        ], screen
        # The context the old fold showed instead of the change is not drawn.
        assert "line 17" not in lines and "line 18" not in lines
    finally:
        tmux.close()
