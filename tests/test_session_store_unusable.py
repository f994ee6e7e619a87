"""A data folder ink cannot write: print mode says so and stops, the app says so and goes on.

The data folder is made unusable for real: a file where the folder should be, or a
folder the process cannot write (mode 0500 for a normal user; for root, which ignores
modes, a read-only bind mount in a private mount namespace, or the test is skipped).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ink_tui.ui.blocks.notice_block import NoticeBlock
from ink_tui.ui.startup import SessionPlan
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer, text_reply
from tests.ui_helpers import make_app, type_text, wait_until

MODEL_VARIABLES = ("INK_", "OPENAI_")


def env_for(home: Path, data: Path, server: ScriptedServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(MODEL_VARIABLES)}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(data),
        XDG_CONFIG_HOME=str(home / "config"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="m",
    )
    return env


def ink_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ink_tui", *args]


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_a_file_where_the_data_folder_should_be_stops_print_mode_with_one_line(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.write_text("not a folder\n")
    done = run(ink_command("-p", "hello"), workspace, env_for(tmp_path, data, server))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert f"{data} is a file, not a folder" in line
    assert "--no-session" in line
    # Refused before the model was asked: no tokens spent on an answer that is not kept.
    assert server.requests == []
    assert done.stdout == ""


def test_no_session_runs_anyway_when_the_data_folder_is_unusable(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.write_text("not a folder\n")
    server.push(text_reply("Answered, unsaved."))
    env = env_for(tmp_path, data, server)
    done = run(ink_command("-p", "hello", "--no-session"), workspace, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Answered, unsaved.\n"
    assert data.read_text() == "not a folder\n"


def _read_only_command(folder: Path, command: list[str]) -> list[str]:
    """`command` run with `folder` read-only; skips the test where that cannot be done."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        return command
    # Root writes through any mode bits: make the folder read-only at the mount instead,
    # in a mount namespace of the child's own (nothing outside it sees the mount).
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("running as root without unshare: cannot make a folder read-only")
    mount = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"'
    probe = subprocess.run(
        [unshare, "-m", "sh", "-c", mount, "sh", str(folder)],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"running as root and no read-only bind mount allowed: {probe.stderr}")
    script = f'{mount} && shift && exec "$@"'
    return [unshare, "-m", "sh", "-c", script, "sh", str(folder), *command]


def test_a_read_only_data_folder_stops_print_mode_with_path_and_cause(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    command = _read_only_command(data, ink_command("-p", "hello"))
    try:
        done = run(command, workspace, env_for(tmp_path, data, server))
    finally:
        data.chmod(0o700)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    # The folder that refused, by name, whichever way it is read-only.
    assert f"{data} is on a read-only file system" in line or f"{data} is read-only" in line
    assert server.requests == []


def notices(app) -> list[NoticeBlock]:
    return [b for b in app.query_one(Transcript).blocks if isinstance(b, NoticeBlock)]


async def test_the_app_says_the_session_is_not_saved_and_why_and_still_works(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    root.write_text("not a folder\n")
    server.push(text_reply("Still answering."))
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(
            pilot,
            lambda: any("not being saved" in n.text for n in notices(app)),
            what="the not-saved notice",
        )
        [notice] = [n for n in notices(app) if "not being saved" in n.text]
        assert notice.level == "warning"
        assert f"{root} is a file, not a folder" in notice.text
        # One clear notice, not a second one about the input history's file.
        assert not any("input history" in n.text for n in notices(app))
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await app.controller.wait_idle()
        transcript = app.query_one(Transcript)
        await wait_until(pilot, lambda: "Still answering." in transcript.plain_text())
    assert root.read_text() == "not a folder\n"
