"""The real `ink` in a 60x20 terminal (a pty, and tmux for the screen as drawn): with the
activity panel, an approval question and two queued entries, typing "now stop" leaves
rows of the answer on screen, the text in the input and the question open."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.pty_terminal import PtyInk
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.test_print_mode import clean_env
from tests.test_tmux_smoke import Tmux

ANSWER = "I will run the cart tests first, then look at the failing totals."
COMMAND = "pytest -q tests/test_cart.py --maxfail=1 -k 'total and not slow'"


def push_question(server: ScriptedServer) -> None:
    server.push(tool_reply([("bash", {"command": COMMAND})], text=ANSWER), text_reply("ok"))


def test_a_60x20_pty_keeps_the_answer_while_now_stop_is_typed(
    server: ScriptedServer, workspace: Path
) -> None:
    push_question(server)
    env = clean_env(INK_APPROVAL="ask")
    app = PtyInk(
        ["--base-url", server.base_url, "--model", "m"], cwd=workspace, env=env, size=(60, 20)
    )
    try:
        app.wait_for("Enter")
        app.send(b"fix the cart totals\r")
        app.wait_for("Ctrl+G to answer")
        app.send(b"keep the public API\r")
        mark = app.mark()
        app.send(b"then add a changelog entry\x1b\r")
        # The queue gave way to its count, and the transcript, laid out again in the
        # room left, drew the answer's rows.
        app.wait_for("2 queued", since=mark)
        app.wait_for("cart tests first", since=mark)
        app.send(b"now stop")
        app.wait_for("now stop", since=mark)
        assert app.process.poll() is None
        # Still asking: nothing typed answered it.
        assert server.requests and len(server.requests) == 1
    finally:
        app.close()


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_60x20_tmux_screen_shows_rows_of_the_answer(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    push_question(server)
    env = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "INK_APPROVAL": "ask",
    }
    tmux = Tmux(workspace, env=env, args=f"--base-url {server.base_url} --model m", size=(60, 20))
    try:
        tmux.wait_for("Alt+Enter")
        tmux.type("fix the cart totals")
        tmux.keys("Enter")
        tmux.wait_for("Ctrl+G to answer")
        tmux.type("keep the public API")
        tmux.keys("Enter")
        tmux.type("then add a changelog entry")
        tmux.keys("M-Enter")
        tmux.wait_for("2 queued")
        tmux.type("now stop")
        screen = tmux.wait_for("now stop")
        lines = screen.splitlines()
        assert len(lines) <= 20
        answer_rows = [line for line in lines if "cart tests" in line or "failing" in line]
        assert answer_rows, screen
        assert "Ctrl+G to answer" in screen  # the question is still open
        assert len(server.requests) == 1
    finally:
        tmux.close()
