"""The real `ink` in tmux (the screen as drawn): the first screen teaches (who answers,
the folder, the keys that matter, where help is) and gives way at the first prompt
(issue #19 item 6)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedServer, text_reply
from tests.test_tmux_smoke import Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

KEYS = ("Enter", "Alt+Enter", "Ctrl+C", "Alt+Up", "Ctrl+G")
# A line of the welcome that nothing else on screen says.
WELCOME_LINE = "queues a follow-up for after the run"


def test_the_first_screen_names_the_model_folder_keys_and_help_then_gives_way(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    server.push(text_reply("Hello from the model."))
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    tmux = Tmux(workspace, env=env, args=f"--base-url {server.base_url} --model m")
    try:
        screen = tmux.wait_for(WELCOME_LINE)
        lines = [line.strip() for line in screen.splitlines()]
        assert any(line.startswith("ink  ·  model m") for line in lines), screen
        assert any(line.startswith("folder ") and workspace.name in line for line in lines)
        for key in KEYS:
            assert any(line.startswith(f"{key} ") for line in lines), (key, screen)
        assert any("/help for every command" in line and "Ctrl+P" in line for line in lines)

        tmux.type("hi")
        tmux.keys("Enter")
        screen = tmux.wait_for("Hello from the model.")
        assert WELCOME_LINE not in screen and "/help for every command" not in screen
    finally:
        tmux.close()
