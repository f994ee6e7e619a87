"""A resumed session's call that never got a result is drawn ended, not running.

Quitting (a double Ctrl+C) while a call's approval question is open leaves the call in
the file without a result. The reader answers it with an error for the model
(`history_repair.NO_RESULT`); the transcript must show the same: `✗`, those words, and
no clock, in the preview of the session's end, in the whole built step by step (`-c`,
`-r`) and in the whole drawn at once (`/resume` in the app). Before, the row kept its
spinner and a clock that counted from the replay ("⠙ write ink-demo-notes.md 8.1s").
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from ink_tui.session.entries import AssistantEntry, SubagentEntry, ToolResultEntry, UserEntry
from ink_tui.session.history_repair import NO_RESULT
from ink_tui.session.session_reader import load_session
from ink_tui.session.session_writer import SessionWriter
from ink_tui.ui import app_start
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.session_replay import show_session
from ink_tui.ui.startup import SessionPlan
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import make_controller
from tests.scripted_server import ScriptedServer
from tests.task_row_helpers import Host, rows, transcript_of
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def write_cut_session(workspace: Path, root: Path) -> SessionWriter:
    """A session whose last call (a write) was asked about and never answered."""
    with SessionWriter.create(workspace, "m", root) as writer:
        writer.record_user(UserMessage("note the demo"))
        listing = ToolCall(id="c1", name="bash", arguments={"command": "ls"})
        write = ToolCall(
            id="c2", name="write", arguments={"path": "ink-demo-notes.md", "content": "x\n"}
        )
        writer.record_assistant(AssistantMessage(text="Writing it.", tool_calls=[listing, write]))
        writer.record_tool_result(ToolResultMessage("c1", "bash", "README.md"), duration_s=0.2)
    return writer


def assert_ended(text: str) -> None:
    [header] = [line for line in text.splitlines() if "ink-demo-notes.md" in line]
    # Ended and failed, with no time: none was measured, and nothing runs.
    assert header.strip() == "✗ write ink-demo-notes.md", header
    assert not any(mark in text for mark in SPINNER)
    assert NO_RESULT in text
    # The answered call is drawn as it was.
    assert "✓ bash ls" in text and "README.md" in text


async def test_a_continued_session_shows_its_unanswered_call_ended(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "data"
    path = write_cut_session(workspace, root).path
    held = threading.Event()
    real_read = app_start.read_planned_session

    def slow_read(plan: SessionPlan) -> object:
        held.wait(10)  # the preview is looked at before the whole is built
        return real_read(plan)

    monkeypatch.setattr(app_start, "read_planned_session", slow_read)
    app, _ = make_app(server, workspace, plan=SessionPlan("resume", path), session_root=root)
    async with app.run_test(size=SIZE) as pilot:

        def preview_text() -> str:
            found = app.query(f"#{app_start.PREVIEW_ID}")
            return found.first(Transcript).plain_text() if found else ""

        await wait_until(pilot, lambda: "ink-demo-notes.md" in preview_text(), what="preview")
        assert_ended(preview_text())

        held.set()
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        await wait_until(pilot, lambda: not app.query(f"#{app_start.PREVIEW_ID}"), what="the whole")
        view = app.query_one(Transcript).plain_text()
        assert "Resumed session" in view
        assert_ended(view)
        # The notice says the same repair the row shows.
        assert "1 tool call has no result" in view


async def test_a_session_resumed_in_the_app_shows_its_unanswered_call_ended(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    session_id = write_cut_session(workspace, root).id
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        await type_text(pilot, f"/resume {session_id[:8]}")
        await pilot.press("enter")
        transcript = app.query_one(Transcript)
        await wait_until(
            pilot, lambda: "Resumed session" in transcript.plain_text(), what="the resume"
        )
        assert_ended(transcript.plain_text())


async def test_a_sub_agents_unanswered_call_is_drawn_ended_under_its_row(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    # A sub-agent stopped while its command ran: its conversation holds the call alone.
    with SessionWriter.create(workspace, "m", tmp_path / "data") as writer:
        writer.record_user(UserMessage("go"))
        task = ToolCall(id="t1", name="task", arguments={"description": "slow job", "prompt": "P"})
        writer.record_assistant(AssistantMessage(tool_calls=[task]))
        sleep = ToolCall(id="s1", name="bash", arguments={"command": "sleep 100"})
        inner: list[UserEntry | AssistantEntry | ToolResultEntry] = [
            UserEntry(UserMessage("P")),
            AssistantEntry(AssistantMessage(tool_calls=[sleep])),
        ]
        writer.record_subagent(SubagentEntry("agent-1", "t1", "slow job", "stopped", inner))
        writer.record_tool_result(ToolResultMessage("t1", "task", "stopped", is_error=True))
    controller, _ = make_controller(server, workspace)
    async with Host(controller).run_test(size=SIZE) as pilot:
        transcript = transcript_of(pilot)
        show_session(transcript, load_session(writer.path))
        await pilot.pause()
        (row,) = rows(transcript)
        (call,) = [block for block in row.children if isinstance(block, ToolBlock)]
        assert call.state == "failed" and not call.running
        assert call.result is not None and call.result.content == NO_RESULT
        assert call.header_text().plain == "✗ bash sleep 100"
