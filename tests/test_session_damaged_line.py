"""A session with a damaged line in the middle stays visible and resumable everywhere.

What is readable is resumed (reading goes on past the damage); the user is told which
line was skipped and where the file is: on stderr in print mode, as a warning notice in
the app. `ink -c`, `ink -r ID`, /sessions and the /resume picker all find it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.session.session_writer import SessionWriter
from ink_tui.ui.blocks.notice_block import NoticeBlock
from ink_tui.ui.startup import SessionPlan, plan_session
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer, text_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # plan_session looks in the user's data folder, as `ink -c` does.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def store(home: Path) -> Path:
    return home / "data" / "ink"


def saved(workspace: Path, root: Path, words: str) -> SessionWriter:
    with SessionWriter.create(workspace, "m", root) as writer:
        writer.record_user(UserMessage(f"{words} one"))
        writer.record_assistant(AssistantMessage(text=f"{words} answer one"))
        writer.record_user(UserMessage(f"{words} two"))
        writer.record_assistant(AssistantMessage(text=f"{words} answer two"))
    return writer


def damaged_newest(workspace: Path, home: Path) -> SessionWriter:
    """An intact older session, then a newer one whose line 3 is damaged."""
    saved(workspace, store(home), "older")
    newer = saved(workspace, store(home), "newer")
    lines = newer.path.read_text().splitlines(keepends=True)
    lines[2] = '{"type":"assistant","text":"newer answ\n'  # cut short by a bad write
    newer.path.write_text("".join(lines))
    return newer


def ink(*args: str, cwd: Path, home: Path, server: ScriptedServer):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="m",
    )
    return subprocess.run(
        [sys.executable, "-m", "ink_tui", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


READABLE = [
    {"role": "user", "content": "newer one"},
    {"role": "user", "content": "newer two"},
    {"role": "assistant", "content": "newer answer two"},
]


def sent(server: ScriptedServer, index: int = 0) -> list[dict[str, object]]:
    return [m for m in server.requests[index]["messages"] if m["role"] != "system"]


@pytest.mark.parametrize("by_id", [False, True], ids=["-c", "-r ID"])
def test_print_mode_resumes_the_damaged_session_and_names_the_skipped_line(
    server: ScriptedServer, workspace: Path, home: Path, by_id: bool
) -> None:
    newer = damaged_newest(workspace, home)
    server.push(text_reply("carried on"))
    flags = ["-r", newer.id[:5]] if by_id else ["-c"]
    done = ink(*flags, "-p", "three", cwd=workspace, home=home, server=server)
    assert done.returncode == 0, done.stderr
    # The damaged session, not the older intact one, and everything readable in it.
    assert sent(server) == [*READABLE, {"role": "user", "content": "three"}]
    assert f"warning: line 3 of {newer.path} is damaged" in done.stderr
    # Appended to the same file, after the damaged line.
    assert newer.path.read_text().splitlines()[-1].startswith('{"type":"assistant"')
    assert "carried on" in newer.path.read_text()


def notices(app) -> list[NoticeBlock]:
    return [b for b in app.query_one(Transcript).blocks if isinstance(b, NoticeBlock)]


def shown(app) -> str:
    return app.query_one(Transcript).plain_text()


async def test_the_app_continues_it_with_a_warning_naming_line_and_file(
    server: ScriptedServer, workspace: Path, home: Path
) -> None:
    newer = damaged_newest(workspace, home)
    plan = plan_session(workspace, continue_=True, resume=None, enabled=True)
    assert plan == SessionPlan("resume", newer.path)
    by_id = plan_session(workspace, continue_=False, resume=newer.id[:5], enabled=True)
    assert by_id == SessionPlan("resume", newer.path)

    server.push(text_reply("carried on"))
    app, _ = make_app(server, workspace, plan=plan, session_root=store(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: f"Resumed session {newer.id}" in shown(app))
        [warning] = [n for n in notices(app) if "damaged" in n.text]
        assert warning.level == "warning"
        assert f"line 3 of {newer.path}" in warning.text
        assert "newer answer two" in shown(app)
        await type_text(pilot, "three")
        await pilot.press("enter")
        await app.controller.wait_idle()
    assert sent(server) == [*READABLE, {"role": "user", "content": "three"}]


async def test_sessions_and_the_picker_list_it(
    server: ScriptedServer, workspace: Path, home: Path
) -> None:
    from ink_tui.ui.screens.session_picker import SessionPicker

    newer = damaged_newest(workspace, home)
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=store(home))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/sessions")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Sessions in this workspace (2)" in shown(app))
        assert newer.id in shown(app)
        await type_text(pilot, "/resume")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.press("enter")  # newest first: the damaged one
        await wait_until(pilot, lambda: f"Resumed session {newer.id}" in shown(app))
        assert any(f"line 3 of {newer.path}" in n.text for n in notices(app))
