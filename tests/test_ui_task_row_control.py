"""Stopping and steering one sub-agent from its task row (keys with the transcript focused,
clicks on its chips), and a resumed session's rows: folded, ended, unfolding to the
sub-agent's recorded conversation. The real controller carries the requests out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input

from ink_tui.control.run_settings import RunSettings
from ink_tui.session.session_reader import load_session
from ink_tui.session.session_recorder import SessionRecorder
from ink_tui.session.session_writer import SessionWriter
from ink_tui.ui import clock
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.session_replay import show_session, show_session_in_steps
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.task_row_helpers import (
    STEER_TEXT,
    Host,
    answer,
    controller_for,
    drawn,
    rows,
    state_line,
    tasks,
    transcript_of,
    until_line,
)
from tests.ui_helpers import wait_until


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    clock.freeze(100.0)
    yield
    clock.freeze(None)


def two_held(server: ScriptedServer) -> dict[str, Gate]:
    """Two sub-agents, each held in its first reply; the second answers once more (after
    a steer) and the parent ends."""
    gates = {"ONE": Gate(), "TWO": Gate()}
    answer(server, "ONE", text_reply("one so far", pieces=2, gate=gates["ONE"]))
    answer(
        server,
        "TWO",
        text_reply("two so far", pieces=2, gate=gates["TWO"]),
        text_reply("two, steered"),
    )
    server.push(tasks(("first job", "ONE"), ("second job", "TWO")), text_reply("parent goes on"))
    return gates


async def test_keys_stop_and_steer_the_row_under_the_cursor_only_from_the_transcript(
    server: ScriptedServer, workspace: Path
) -> None:
    gates = two_held(server)
    controller, _ = controller_for(server, workspace)
    host = Host(controller)
    async with host.run_test(size=(100, 40)) as pilot:
        transcript = transcript_of(pilot)
        controller.submit("go")
        for gate in gates.values():
            await wait_gate(gate)
        first, second = rows(transcript)
        await until_line(pilot, transcript, second, "■ stop", "✎ steer")
        # Typed into the input, x and s are text: nothing is asked of any sub-agent.
        typed = pilot.app.query_one(Input)
        assert typed.has_focus
        await pilot.press("x", "s")
        assert typed.value == "xs" and host.requests == []
        # Tab to the transcript: the cursor is on the last row, and the row names its keys.
        await pilot.press("tab")
        assert transcript.cursor is second
        assert "x stop · s steer" in state_line(transcript, second)
        assert "x stop · s steer" not in state_line(transcript, first)
        await pilot.press("s")
        assert host.requests == [("steer", second.agent_id, "second job")]
        await pilot.press("up", "x")
        assert host.requests[-1] == ("stop", first.agent_id, "first job")
        assert first.agent_id != second.agent_id
        await until_line(pilot, transcript, first, "stopped by the user")
        # The stopped one takes no more keys; the other still runs.
        await pilot.press("x")
        assert len(host.requests) == 2 and second.agent_running
        gates["TWO"].open()
        await controller.wait_idle()
        await until_line(pilot, transcript, second, "completed")
        # The steer reached the second sub-agent's next request, and shows in its
        # transcript as a steer line.
        by_prompt = {p: [r for r in server.requests if user_texts(r)[:1] == [p]] for p in gates}
        assert STEER_TEXT in user_texts(by_prompt["TWO"][-1])
        assert not any(STEER_TEXT in user_texts(r) for r in by_prompt["ONE"])
        assert not any(
            STEER_TEXT in user_texts(r) for r in server.requests if user_texts(r)[:1] == ["go"]
        )
        second.set_expanded(True)
        transcript.tasks.changed(second)
        assert f"steer  {STEER_TEXT}" in drawn(transcript, second)
        assert "two, steered" in drawn(transcript, second)


async def test_clicks_on_the_chips_stop_or_steer_that_sub_agent(
    server: ScriptedServer, workspace: Path
) -> None:
    gates = two_held(server)
    controller, _ = controller_for(server, workspace)
    host = Host(controller)
    async with host.run_test(size=(100, 40)) as pilot:
        transcript = transcript_of(pilot)
        controller.submit("go")
        for gate in gates.values():
            await wait_gate(gate)
        first, second = rows(transcript)
        await until_line(pilot, transcript, first, "■ stop", "✎ steer")

        async def click(row: object, chip: str) -> None:
            region = transcript.block_region(row)  # type: ignore[arg-type]
            assert region is not None
            x = transcript.block_lines(row)[0].text.index(chip)  # type: ignore[arg-type]
            await pilot.click(transcript, offset=(region.x + x, region.y))

        await click(second, "✎")
        assert host.requests == [("steer", second.agent_id, "second job")]
        # A click on the state line's words folds the row, as on any tool row.
        await pilot.click(transcript, offset=(4, transcript.block_region(first).y))  # type: ignore[union-attr]
        assert first.expanded and len(host.requests) == 1
        await click(first, "■")
        assert host.requests[-1] == ("stop", first.agent_id, "first job")
        await until_line(pilot, transcript, first, "stopped by the user")
        gates["TWO"].open()
        await controller.wait_idle()
        # Ended: no chips left to click.
        assert "■ stop" not in state_line(transcript, first)
        assert "✎ steer" not in state_line(transcript, second)


@pytest.mark.parametrize("in_steps", [False, True], ids=["resume", "continue"])
async def test_a_resumed_session_shows_each_task_row_folded_and_unfolds_it(
    server: ScriptedServer, workspace: Path, tmp_path: Path, in_steps: bool
) -> None:
    answer(
        server,
        "ONE",
        tool_reply([("read", {"path": "README.md"})]),
        text_reply("The readme says **Sample**."),
    )
    answer(server, "TWO", text_reply("sum.py adds numbers."))
    server.push(tasks(("read the readme", "ONE"), ("read sum.py", "TWO")), text_reply("done"))
    controller, _ = controller_for(server, workspace)
    writer = SessionWriter.create(workspace, "scripted-model", root=tmp_path / "store")
    controller.bus.subscribe(SessionRecorder(writer))
    controller.submit("go")
    await controller.wait_idle()
    writer.close()
    loaded = load_session(writer.path)

    idle, _ = controller_for(server, workspace)
    async with Host(idle).run_test(size=(100, 40)) as pilot:
        transcript = transcript_of(pilot)
        if in_steps:
            await show_session_in_steps(transcript, loaded)
        else:
            show_session(transcript, loaded)
        await pilot.pause()
        first, second = rows(transcript)
        for row, name in ((first, "read the readme"), (second, "read sum.py")):
            assert not row.expanded and not row.agent_running
            line = state_line(transcript, row)
            assert f"✓ {name}" in line and "completed" in line and "tokens" in line
            assert "■ stop" not in line
        assert drawn(transcript, first).split("\n")[1].strip() == "└ The readme says **Sample**."
        await pilot.press("tab", "up")
        assert transcript.cursor is first
        await pilot.press("enter")
        await wait_until(pilot, lambda: "✓ read README.md" in drawn(transcript, first))
        shown = drawn(transcript, first)
        assert "ONE" in shown and "The readme says Sample." in shown
        assert "sum.py adds numbers" not in shown
        # Nothing runs: the keys ask nothing.
        await pilot.press("x", "s")
        assert isinstance(pilot.app, Host) and pilot.app.requests == []


async def test_a_stopped_sub_agent_is_shown_stopped_on_resume(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    gate = Gate()
    answer(server, "ONE", text_reply("half an answer", pieces=2, gate=gate))
    server.push(tasks(("slow job", "ONE")), text_reply("parent goes on"))
    controller, events = controller_for(server, workspace)
    writer = SessionWriter.create(workspace, "scripted-model", root=tmp_path / "store")
    controller.bus.subscribe(SessionRecorder(writer))
    controller.submit("go")
    await wait_gate(gate)
    await events.wait_for(lambda e: e.type == "text_delta" and e.agent_id == "agent-1")
    controller.abort_agent("agent-1")
    await controller.wait_idle()
    writer.close()
    idle, _ = controller_for(server, workspace)
    async with Host(idle).run_test(size=(100, 30)) as pilot:
        transcript = transcript_of(pilot)
        show_session(transcript, load_session(writer.path))
        await pilot.pause()
        (row,) = rows(transcript)
        assert "■ slow job  stopped by the user" in state_line(transcript, row)
        # Folded, it says what it had written by then (its state line says it stopped).
        assert "└ had so far: half" in drawn(transcript, row)
        row.set_expanded(True)
        transcript.tasks.changed(row)
        assert "half" in drawn(transcript, row)


async def test_a_sub_agents_own_sub_agent_shows_under_its_row_live_and_resumed(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    inner_call = ("task", {"description": "inner job", "prompt": "INNER"}, "call_in")
    answer(server, "OUTER", tool_reply([inner_call]), text_reply("outer answer"))
    answer(server, "INNER", text_reply("inner answer"))
    server.push(tasks(("outer job", "OUTER")), text_reply("done"))
    controller, _ = controller_for(server, workspace, settings=RunSettings(subagents_max_depth=2))
    writer = SessionWriter.create(workspace, "scripted-model", root=tmp_path / "store")
    controller.bus.subscribe(SessionRecorder(writer))
    async with Host(controller).run_test(size=(100, 40)) as pilot:
        transcript = transcript_of(pilot)
        controller.submit("go")
        await controller.wait_idle()
        (outer,) = rows(transcript)
        await until_line(pilot, transcript, outer, "✓ outer job", "completed")
        (inner,) = [b for b in outer.children if isinstance(b, TaskBlock)]
        assert inner.description == "inner job" and inner.stop_reason == "completed"
        assert [c.plain_text() for c in inner.children][-1] == "inner answer"
    writer.close()

    idle, _ = controller_for(server, workspace)
    async with Host(idle).run_test(size=(100, 40)) as pilot:
        transcript = transcript_of(pilot)
        show_session(transcript, load_session(writer.path))
        await pilot.pause()
        (outer,) = rows(transcript)
        (inner,) = [b for b in outer.children if isinstance(b, TaskBlock)]
        assert inner.children and inner.children[-1].plain_text() == "inner answer"
        outer.set_expanded(True)
        transcript.tasks.changed(outer)
        assert "✓ inner job" in drawn(transcript, outer)
        assert "outer answer" in drawn(transcript, outer)
