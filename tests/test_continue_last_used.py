"""`ink -c` continues the session used last, not the one started last (issue item 2).

"Used" is the last write of the session file or of its `.pending.json` (input queued or
typed and not sent, which is written alone). Through the catalog, the app with the real
plan (the pending input is in the editor), the real `ink` on a pty after a `/resume`,
and `ink -c -p`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.session.catalog import newest_session_path
from ink_tui.session.pending_input import PendingEntry, PendingInputStore
from ink_tui.session.session_choice import choose_session
from ink_tui.session.session_writer import SessionWriter
from ink_tui.session.store_paths import pending_input_path
from ink_tui.ui.startup import plan_session
from tests.pty_terminal import PtyInk
from tests.scripted_server import Gate, ScriptedServer, text_reply
from tests.ui_helpers import make_app, wait_until

CTRL_C = b"\x03"
ALT_ENTER = b"\x1b\r"
MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}
# Two moments, as file times (ns): what was written "earlier" and "later".
EARLIER, LATER = 1_700_000_000 * 10**9, 1_700_000_100 * 10**9


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def make_session(workspace: Path, prompt: str) -> Path:
    with SessionWriter.create(workspace, "m") as writer:
        writer.record_user(UserMessage(prompt))
        writer.record_assistant(AssistantMessage(text=f"reply to {prompt}"))
    return writer.path


def written_at(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))


def two_sessions(workspace: Path) -> tuple[Path, Path]:
    """An older and a newer session (by start), the newer one written last."""
    older = make_session(workspace, "older prompt")
    newer = make_session(workspace, "newer prompt")
    written_at(older, EARLIER)
    written_at(newer, LATER)
    return older, newer


def test_continue_takes_the_session_written_last_not_started_last(
    workspace: Path, data_home: Path
) -> None:
    older, newer = two_sessions(workspace)
    assert newest_session_path(workspace) == newer
    # The older one is resumed and worked in: its file is written last now.
    with SessionWriter.open_existing(older) as writer:
        writer.record_user(UserMessage("more work"))
    written_at(older, LATER + 10**9)
    assert newest_session_path(workspace) == older
    assert choose_session(workspace, continue_=True, resume=None).path == older


def test_pending_input_alone_counts_as_use(workspace: Path, data_home: Path) -> None:
    older, _ = two_sessions(workspace)
    PendingInputStore(older).save([PendingEntry("queued in the older one", "follow_up")], "")
    written_at(pending_input_path(older), LATER + 10**9)
    assert newest_session_path(workspace) == older
    # A session in which nothing was said but input waits is still continued.
    with SessionWriter.create(workspace, "m") as writer:
        pass
    PendingInputStore(writer.path).save([], "typed, never sent")
    written_at(writer.path, LATER + 2 * 10**9)
    written_at(pending_input_path(writer.path), LATER + 2 * 10**9)
    assert newest_session_path(workspace) == writer.path


async def test_the_app_with_the_real_plan_opens_it_with_its_input_in_the_editor(
    server: ScriptedServer, workspace: Path, data_home: Path
) -> None:
    older, _ = two_sessions(workspace)
    PendingInputStore(older).save([PendingEntry("queued in the older one", "follow_up")], "")
    written_at(pending_input_path(older), LATER + 10**9)
    plan = plan_session(workspace, continue_=True, resume=None, enabled=True)
    assert not isinstance(plan, str) and plan.path == older
    app, _ = make_app(server, workspace, plan=plan)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(
            pilot, lambda: app.prompt.text == "queued in the older one", what="the restored input"
        )
        assert app.sessions is not None and app.sessions.path == older
        from tests.test_ui_app import transcript_text

        shown = transcript_text(app)
        assert "older prompt" in shown
        assert "Restored 1 queued input from when the app last stopped." in shown


@pytest.fixture
def ink_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    return env


def test_on_a_pty_resume_the_older_queue_quit_then_continue_opens_it_and_p_continues_it(
    server: ScriptedServer, workspace: Path, data_home: Path, ink_env: dict[str, str]
) -> None:
    older, newer = two_sessions(workspace)
    older_id = json.loads(older.read_text().splitlines()[0])["id"]
    args = ["--base-url", server.base_url, "--model", "m"]

    gate = Gate()
    server.push(text_reply("Working on it, slowly.", gate=gate))
    ink = PtyInk(args, cwd=workspace, env=ink_env)
    try:
        ink.wait_for("idle")
        # Typed at once, as a user may: a command sent before the app has its controller
        # and sessions waits for them, as a line does.
        resumed = ink.mark()
        ink.send(f"/resume {older_id}\r".encode())
        ink.wait_for("older prompt", since=resumed)
        ink.send(b"go on\r")
        assert gate.reached.wait(10), "the request never reached the server"
        ink.send(b"queued for later" + ALT_ENTER)
        ink.wait_for("Queued")
        ink.send(CTRL_C + CTRL_C)
        assert ink.wait_exit() == 130
    finally:
        ink.close()
    assert "queued for later" in pending_input_path(older).read_text()
    assert not pending_input_path(newer).exists()

    ink = PtyInk(["-c", *args], cwd=workspace, env=ink_env)
    try:
        ink.wait_for("older prompt")
        ink.wait_for("Restored")
        ink.wait_for("queued for later")
        assert "newer prompt" not in ink.text()
    finally:
        ink.close()

    server.push(text_reply("continued here"))
    done = subprocess.run(
        [sys.executable, "-m", "ink_tui", "-c", "-p", "and now this", *args],
        cwd=workspace,
        env=ink_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "continued here" in done.stdout
    assert "and now this" in older.read_text()
    assert "and now this" not in newer.read_text()
