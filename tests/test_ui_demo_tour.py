"""The demo's tour in the whole app (Pilot, the real tools, approval policy `ask`): it
writes a notes file of its own and edits it, each asked about with its diff, and runs a
plain command whose question offers "this session" and "always"."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from ink_tui.control.bus import EventBus
from ink_tui.control.controller import RunController
from ink_tui.control.run_settings import RunSettings
from ink_tui.providers.demo import DemoProvider
from ink_tui.providers.demo_replies import BASH_COMMAND
from ink_tui.tools import default_tools
from ink_tui.ui.app import InkApp
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.widgets.approval_question import ApprovalQuestion
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import Recorder
from tests.ui_helpers import type_text, wait_until


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def demo_app(workspace: Path) -> tuple[InkApp, Recorder]:
    recorder = Recorder()

    def make_controller(bus: EventBus) -> RunController:
        bus.subscribe(recorder)
        return RunController(
            provider=DemoProvider(workspace, chars_per_second=0),
            tools=default_tools(),
            workspace=workspace,
            system_prompt="You are a test.",
            settings=RunSettings(approval="ask"),
            bus=bus,
        )

    app = InkApp(make_controller, model_label="demo", is_demo=True, workspace=workspace)
    return app, recorder


def shown(question: ApprovalQuestion, part: str) -> str:
    return str(question.query_one(f"#approval-{part}", Static).render())


async def next_question(pilot: Pilot, question: ApprovalQuestion, seen: int) -> None:
    """Wait for the tour's next question (the `seen`+1-th)."""
    recorder = pilot.app.recorder  # type: ignore[attr-defined]

    def opened() -> bool:
        return question.is_open and len(recorder.of("approval_request")) > seen

    await wait_until(pilot, opened, within=20, what=f"question {seen + 1}")
    await pilot.pause()


async def answer(pilot: Pilot, key: str) -> None:
    await pilot.press("ctrl+g", key)
    await pilot.pause()


async def test_the_tour_asks_about_a_write_an_edit_and_a_plain_command(workspace: Path) -> None:
    (workspace / "README.md").write_text("# Widgets\n\nA tokenizer for widgets.\n")
    app, recorder = demo_app(workspace)
    app.recorder = recorder  # type: ignore[attr-defined]
    async with app.run_test(size=(100, 44)) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        await type_text(pilot, "explain the tokenizer")
        await pilot.press("enter")
        question = app.query_one(ApprovalQuestion)

        # 1. The write of a new file of its own, with its diff.
        await next_question(pilot, question, 0)
        assert "write ink-demo-notes.md" in shown(question, "call")
        preview = shown(question, "preview")
        assert preview.startswith("new file") and "+# Notes from ink's demo" in preview
        assert question.decisions == ["allow", "session", "always", "deny"]
        await answer(pilot, "y")
        notes = workspace / "ink-demo-notes.md"
        await wait_until(pilot, notes.exists, what="the notes file")

        # 2. The edit of it, with its diff.
        await next_question(pilot, question, 1)
        assert "edit ink-demo-notes.md" in shown(question, "call")
        preview = shown(question, "preview")
        assert "-Status: draft" in preview and "+Status: edited by the demo" in preview
        await answer(pilot, "y")

        # 3. A plain command: "this session" and "always" are offered.
        await next_question(pilot, question, 2)
        assert "bash ls -la" in shown(question, "call")
        assert question.decisions == ["allow", "session", "always", "deny"]
        request = recorder.of("approval_request")[2]
        assert request.rule == "bash:ls"
        await answer(pilot, "s")

        # 4. The slow command, with shell syntax: once or not at all.
        await next_question(pilot, question, 3)
        assert question.decisions == ["allow", "deny"]
        assert recorder.of("approval_request")[3].call.arguments["command"] == BASH_COMMAND
        await answer(pilot, "y")
        await wait_until(pilot, lambda: app.controller.state == "idle", within=30, what="idle")
        await pilot.pause()

        assert notes.read_text().startswith("# Notes from ink's demo (edited)\n")
        transcript = app.query_one(Transcript)
        edit = next(b for b in transcript.blocks_of(ToolBlock) if b.call.name == "edit")
        # The edit's fold shows its changed lines.
        drawn = [line.text.strip() for line in transcript.block_lines(edit)]
        assert edit.collapsed and "+Status: edited by the demo" in drawn
        assert "wc -l` counted" in transcript.plain_text()
