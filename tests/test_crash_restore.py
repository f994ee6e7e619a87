"""Queued input survives `kill -9`: the real app in tmux, killed, then `ink -c`."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.scripted_server import Gate, ScriptedServer, text_reply
from tests.test_tmux_smoke import Tmux

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "tmux"], capture_output=True).returncode != 0,
    reason="tmux is not installed",
)


def pane_pid(tmux: Tmux) -> int:
    done = subprocess.run(
        [*tmux.tmux, "display-message", "-p", "-t", tmux.name, "#{pane_pid}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


def test_kill_9_with_queued_entries_then_continue_restores_them(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Working on it, slowly", gate=gate))
    env = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "INK_BASE_URL": server.base_url,
        "INK_MODEL": "scripted-model",
    }
    first = Tmux(workspace, env=env)
    try:
        first.wait_for("scripted-model")
        first.type("start a long task")
        first.keys("Enter")
        assert gate.reached.wait(20)
        first.type("steer that must survive")
        first.keys("Enter")
        first.type("follow-up that must survive")
        first.keys("M-Enter")
        first.wait_for("Queued · 2")
        first.type("half-typed draft")
        pending = tmp_path / "data" / "ink" / "sessions"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            files = list(pending.glob("*/*.pending.json"))
            if files and "half-typed draft" in files[0].read_text():
                break
            time.sleep(0.05)
        else:
            raise AssertionError("pending input was never written")
        os.kill(pane_pid(first), signal.SIGKILL)
    finally:
        gate.open()
        first.close()

    second = Tmux(workspace, env=env, args="-c")
    try:
        screen = second.wait_for("Restored 2 queued inputs", within=20)
        assert "start a long task" in screen  # the resumed transcript
        editor = screen.split("Restored 2 queued inputs")[-1]
        assert "steer that must survive" in editor
        assert "follow-up that must survive" in editor
        assert "half-typed draft" in editor
    finally:
        second.close()
