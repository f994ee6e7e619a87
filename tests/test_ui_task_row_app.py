"""The task row in the real app (its own handlers for the row's requests): Tab to the
transcript, `s` points the input at that sub-agent and the line sent steers it (its next
request, not the parent's); `x` stops the other, and the parent goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.tools import default_tools
from ink_tui.tools.task import TaskTool
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply
from tests.task_row_helpers import answer, state_line, tasks
from tests.ui_helpers import make_app, type_text, wait_until


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


async def test_the_rows_keys_in_the_app_steer_one_sub_agent_and_stop_the_other(
    server: ScriptedServer, workspace: Path
) -> None:
    gates = {"ONE": Gate(), "TWO": Gate()}
    answer(server, "ONE", text_reply("one so far", pieces=2, gate=gates["ONE"]))
    answer(
        server,
        "TWO",
        text_reply("two so far", pieces=2, gate=gates["TWO"]),
        text_reply("two, steered"),
    )
    server.push(tasks(("first job", "ONE"), ("second job", "TWO")), text_reply("parent goes on"))
    app, _ = make_app(server, workspace, tools=[*default_tools(), TaskTool()])
    async with app.run_test(size=(100, 36)) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        for gate in gates.values():
            await wait_gate(gate)
        transcript = app.query_one(Transcript)
        first, second = transcript.blocks_of(TaskBlock)
        await wait_until(pilot, lambda: second.agent_running and first.agent_running)
        # Tab: the cursor on the last row; s points the input at its sub-agent.
        await pilot.press("tab")
        assert transcript.has_focus and transcript.cursor is second
        await pilot.press("s")
        assert app.prompt.has_focus
        await type_text(pilot, "mind the tests")
        await pilot.press("enter")
        # Back to the transcript, up to the first row: x stops it.
        await pilot.press("tab", "up", "x")
        await wait_until(pilot, lambda: "stopped by the user" in state_line(transcript, first))
        assert second.agent_running
        gates["TWO"].open()
        assert app.controller is not None
        await app.controller.wait_idle()
        await wait_until(pilot, lambda: "completed" in state_line(transcript, second))
        requests = {p: [r for r in server.requests if user_texts(r)[:1] == [p]] for p in gates}
        assert "mind the tests" in user_texts(requests["TWO"][-1])
        parent = [r for r in server.requests if user_texts(r)[:1] == ["go"]]
        assert not any("mind the tests" in user_texts(r) for r in parent + requests["ONE"])
        # The parent went on after the stop, to its own answer.
        assert "parent goes on" in transcript.plain_text()
