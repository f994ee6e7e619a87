"""Resuming a long session: its end shows, and takes typing, before the rest is read.

`ink -c`/`-r` read the session file's last entries first (`session_tail`) and draw them
in a preview; the whole file is read and its transcript built behind it, which then
takes the preview's place and gets the controller. `-r ID` finds the file by its name.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from ink_tui.session import catalog
from ink_tui.session.entries import AssistantEntry, ToolResultEntry, UserEntry
from ink_tui.session.session_writer import SessionWriter
from ink_tui.ui import app_start
from ink_tui.ui.session_tail import read_tail
from ink_tui.ui.startup import SessionPlan, plan_session
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer
from tests.ui_helpers import make_app, wait_until

SIZE = (100, 32)


def write_session(workspace: Path, root: Path | None, turns: int, tool_lines: int = 3) -> Path:
    """`turns` prompts, each answered with a bash call, its result and a last word."""
    with SessionWriter.create(workspace, "m", root) as writer:
        for i in range(1, turns + 1):
            writer.record_user(UserMessage(f"prompt {i}"))
            call = ToolCall(id=f"c{i}", name="bash", arguments={"command": f"echo {i}"})
            writer.record_assistant(AssistantMessage(text=f"answer {i}", tool_calls=[call]))
            output = "\n".join(f"line {k} of {i}" for k in range(tool_lines))
            writer.record_tool_result(ToolResultMessage(call.id, "bash", output))
            writer.record_assistant(AssistantMessage(text=f"done {i}"))
    return writer.path


def test_the_tail_is_the_last_entries_in_order(tmp_path: Path) -> None:
    path = write_session(tmp_path, tmp_path / "data", turns=3)
    tail = read_tail(path, entries=5)
    assert len(tail) == 5
    assert isinstance(tail[0], AssistantEntry) and tail[0].message.text == "done 2"
    assert isinstance(tail[1], UserEntry) and tail[1].message.content == "prompt 3"
    assert isinstance(tail[3], ToolResultEntry)
    assert isinstance(tail[-1], AssistantEntry) and tail[-1].message.text == "done 3"
    # A small file is read whole: every entry, and the header is not one.
    assert len(read_tail(path, entries=100)) == 12


def test_the_tail_of_a_big_file_starts_at_a_whole_line_and_skips_a_torn_last_one(
    tmp_path: Path,
) -> None:
    # Tool results of some 4 KB each: the tail spans several 64 KB blocks read backwards.
    path = write_session(tmp_path, tmp_path / "data", turns=200, tool_lines=300)
    with open(path, "ab") as file:
        file.write(b'{"type": "assistant", "text": "cut of')
    tail = read_tail(path, entries=40)
    assert len(tail) == 40
    assert isinstance(tail[-1], AssistantEntry) and tail[-1].message.text == "done 200"
    assert isinstance(tail[0], UserEntry) and tail[0].message.content == "prompt 191"


async def test_a_resumed_session_shows_its_end_and_takes_keys_before_the_rest_is_read(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "data"
    path = write_session(workspace, root, turns=300)
    held = threading.Event()
    real_read = app_start.read_planned_session

    def slow_read(plan: SessionPlan):  # type: ignore[no-untyped-def]
        held.wait(10)  # the whole file is read only once the test lets it
        return real_read(plan)

    monkeypatch.setattr(app_start, "read_planned_session", slow_read)
    app, _ = make_app(server, workspace, plan=SessionPlan("resume", path), session_root=root)
    async with app.run_test(size=SIZE) as pilot:

        def preview_text() -> str:
            found = app.query(f"#{app_start.PREVIEW_ID}")
            return found.first(Transcript).plain_text() if found else ""

        await wait_until(pilot, lambda: "done 300" in preview_text(), what="the end")
        assert "prompt 300" in preview_text()
        assert "prompt 1\n" not in preview_text()
        # Nothing else is built yet, and typing works.
        assert app.controller is None
        await pilot.press("h", "i")
        assert app.prompt.text == "hi"
        # The completion menu comes once the end is drawn, not after the rest; what shows
        # only while the controller runs comes with the controller.
        await wait_until(pilot, lambda: bool(app.query("CompletionMenu")), what="completion")
        assert not app.query("QueueList")

        held.set()
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        assert not app.query(f"#{app_start.PREVIEW_ID}")
        assert app.query("QueueList") and app.query("ApprovalQuestion")
        view = app.query_one(Transcript).plain_text()
        assert view.startswith("prompt 1\n")
        assert "done 300" in view and "Resumed session" in view
        assert app.query_one(Transcript).display
        assert len(app.controller.history) == 1200
        assert app.prompt.text == "hi"


def test_resume_by_id_finds_the_file_by_its_name_without_reading_the_sessions(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    path = write_session(workspace, None, turns=2)
    other = write_session(workspace, None, turns=1)
    session_id = path.name.split("_")[1].removesuffix(".jsonl")

    def no_summaries(_: Path) -> None:
        raise AssertionError("the catalog read a session to find one by id")

    with monkeypatch.context() as patched:
        patched.setattr(catalog, "summarize", no_summaries)
        plan = plan_session(workspace, continue_=False, resume=session_id[:6], enabled=True)
    assert plan == SessionPlan("resume", path)
    # No match, or several: the catalog's way, and its wording.
    missing = plan_session(workspace, continue_=False, resume="zzzz", enabled=True)
    assert isinstance(missing, str) and "no session id starts with 'zzzz'" in missing
    assert other != path


async def test_a_session_whose_end_showed_but_whole_read_failed_says_so_in_its_place(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "data"
    path = write_session(workspace, root, turns=5)
    failure = OSError("disk went away")
    monkeypatch.setattr(app_start, "read_planned_session", lambda plan: failure)
    app, _ = make_app(server, workspace, plan=SessionPlan("resume", path), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        assert not app.query(f"#{app_start.PREVIEW_ID}")
        transcript = app.query_one(Transcript)
        assert transcript.display
        assert "Could not resume" in transcript.plain_text()
        assert "disk went away" in transcript.plain_text()
