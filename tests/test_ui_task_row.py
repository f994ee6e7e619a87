"""A `task` call's row in the transcript, fed by the real controller's events against the
loopback server: what its sub-agent does now, its time and tokens, how it ended, and its
whole transcript unfolded under it (live, while it streams); two sub-agents side by
side, each under its own row; the main transcript never gets a sub-agent's deltas."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.strip import Strip

from ink_tui.core.events import MessageEnd, SubagentStart, TextDelta, ToolStart, UserMessageEvent
from ink_tui.core.messages import AssistantMessage, ToolCall
from ink_tui.ui import clock
from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.blocks.block import Look
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.blocks.thinking_block import ThinkingBlock
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.blocks.user_block import UserBlock
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.task_row_helpers import (
    Host,
    answer,
    controller_for,
    drawn,
    rows,
    state_line,
    tasks,
    thinking_reply,
    transcript_of,
    until_line,
)
from tests.test_ui_transcript import running
from tests.ui_helpers import wait_until


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    clock.freeze(100.0)
    yield
    clock.freeze(None)


async def test_the_row_follows_the_sub_agent_then_says_how_it_ended(
    server: ScriptedServer, workspace: Path
) -> None:
    release, gate = asyncio.Event(), Gate()
    answer(
        server,
        "SUB",
        tool_reply([("read", {"path": "README.md"})]),
        text_reply("The readme **says** hello.", gate=gate),
    )
    server.push(tasks(("scan the readme", "SUB")), text_reply("top answer"))
    controller, events = controller_for(server, workspace, release=release)
    async with Host(controller).run_test(size=(100, 30)) as pilot:
        transcript = transcript_of(pilot)
        controller.submit("go")
        await wait_until(pilot, lambda: len(rows(transcript)) == 1, what="the task row")
        (row,) = rows(transcript)
        # Its tool, and the tokens of its first reply (10 in, 5 out), with a spinner.
        line = await until_line(pilot, transcript, row, "scan the readme", "read README.md")
        assert "15 tokens" in line and line[0] in clock.SPINNER_FRAMES
        clock.freeze(112.0)
        await until_line(pilot, transcript, row, "12s")
        release.set()
        await wait_gate(gate)
        await until_line(pilot, transcript, row, "writing")
        gate.open()
        await controller.wait_idle()
        line = await until_line(pilot, transcript, row, "✓ scan the readme", "completed")
        assert "30 tokens" in line and not any(c in line for c in clock.SPINNER_FRAMES)
        # Folded: the state line and the result's first line, nothing of its transcript.
        assert drawn(transcript, row).split("\n")[1].strip() == "└ The readme **says** hello."
        assert not row.expanded and "SUB" not in drawn(transcript, row)
        # The main transcript: the prompt, the row, the parent's own answer; none of the
        # sub-agent's blocks among them.
        kinds = [type(b).__name__ for b in transcript.blocks if type(b).__name__ != "NoticeBlock"]
        assert kinds == ["UserBlock", "TaskBlock", "AnswerBlock"]
        assert [b.text for b in transcript.blocks_of(AnswerBlock)] == ["top answer"]
        starts = [e for e in events.events if isinstance(e, SubagentStart)]
        assert row.agent_id == starts[0].agent_id == "agent-1"


async def test_unfolded_it_streams_the_sub_agents_transcript_drawn_like_the_main_one(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    answer(
        server,
        "SUB",
        thinking_reply("Which file holds it?", tool_reply([("read", {"path": "README.md"})])),
        text_reply("## Found\n\nThe **cart** lives in `sum.py`.", pieces=2, gate=gate),
    )
    server.push(tasks(("find the cart", "SUB")), text_reply("top answer"))
    controller, _ = controller_for(server, workspace)
    async with Host(controller).run_test(size=(100, 40)) as pilot:
        transcript = transcript_of(pilot)
        controller.submit("go")
        await wait_gate(gate)
        (row,) = rows(transcript)
        # Unfolded from the keyboard, as any fold: Tab to the transcript, Enter.
        await pilot.press("tab")
        assert transcript.has_focus and transcript.cursor is row
        await pilot.press("enter")
        assert row.expanded
        await wait_until(pilot, lambda: "Found" in drawn(transcript, row), what="the heading")
        shown = drawn(transcript, row)
        # Its prompt as a user line, its reasoning, its reply, its tool call with its
        # result folded, and the answer arriving: all indented behind the guide.
        for part in ("SUB", "Which file holds it?", "✓ read README.md", "# Sample"):
            assert part in shown, part
        children = shown.split("\n")[1:]
        assert children and all(line.startswith("  │") for line in children if line.strip())
        kinds = [UserBlock, ThinkingBlock, ToolBlock, AnswerBlock]
        assert [type(b) for b in row.children] == kinds
        gate.open()
        await controller.wait_idle()
        await wait_until(pilot, lambda: "cart lives in sum.py" in drawn(transcript, row))
        # Drawn as markdown: no asterisks or backticks left of the answer.
        assert "**cart**" not in drawn(transcript, row)
        # The thinking setting holds there too.
        transcript.toggle_thinking()
        await wait_until(pilot, lambda: "Which file holds it?" not in drawn(transcript, row))
        # Folded again: one line and the result's first line.
        await pilot.press("enter")
        assert drawn(transcript, row).strip().split("\n")[1].strip().startswith("└ ## Found")


async def test_two_sub_agents_at_once_each_under_its_own_row(
    server: ScriptedServer, workspace: Path
) -> None:
    gates = {"ONE": Gate(), "TWO": Gate()}
    for prompt, gate in gates.items():
        answer(server, prompt, text_reply(f"answer of {prompt.lower()}", pieces=2, gate=gate))
    server.push(tasks(("first job", "ONE"), ("second job", "TWO")), text_reply("both done"))
    controller, events = controller_for(server, workspace)
    async with Host(controller).run_test(size=(100, 40)) as pilot:
        transcript = transcript_of(pilot)
        controller.submit("go")
        for gate in gates.values():
            await wait_gate(gate)
        first, second = rows(transcript)
        await until_line(pilot, transcript, first, "first job", "writing")
        await until_line(pilot, transcript, second, "second job", "writing")
        for row in (first, second):
            row.set_expanded(True)
            transcript.tasks.changed(row)
        gates["TWO"].open()
        await wait_until(pilot, lambda: "answer of two" in drawn(transcript, second))
        # The first still runs, holding only its own words.
        assert first.agent_running and "answer of two" not in drawn(transcript, first)
        gates["ONE"].open()
        await controller.wait_idle()
        await wait_until(pilot, lambda: "answer of one" in drawn(transcript, first))
        assert "answer of one" not in drawn(transcript, second)
        ids = {e.parent_call_id: e.agent_id for e in events.events if e.type == "subagent_start"}
        assert (first.agent_id, second.agent_id) == (ids["call_1"], ids["call_2"])
        assert first.agent_id != second.agent_id
        assert "completed" in state_line(transcript, first)
        assert "completed" in state_line(transcript, second)


async def test_a_burst_of_sub_agent_deltas_is_drawn_once_per_frame_not_once_per_delta(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    draws: list[int] = []
    draw = TaskBlock.render_lines

    def counted(self: TaskBlock, width: int, look: Look) -> list[Strip]:
        draws.append(width)
        return draw(self, width, look)

    monkeypatch.setattr(TaskBlock, "render_lines", counted)
    async with running() as (pilot, transcript, bus):
        task = ToolCall("call_task", "task", {"description": "scan", "prompt": "look"})
        bus.publish(MessageEnd(message=AssistantMessage(tool_calls=[task])))
        # Queued (concurrent, no slot yet): no spinner turns, so only the deltas draw.
        bus.publish(ToolStart(call=task, concurrent=True))
        agent, parent = "agent-1", "call_task"
        bus.publish(
            SubagentStart(description="scan", prompt="look", agent_id=agent, parent_call_id=parent)
        )
        bus.publish(
            UserMessageEvent(text="look", kind="prompt", agent_id=agent, parent_call_id=parent)
        )
        (row,) = rows(transcript)
        transcript.toggle_fold(row)
        transcript.flush_now()
        before = len(draws)
        for n in range(300):
            bus.publish(TextDelta(text=f"word{n} ", agent_id=agent, parent_call_id=parent))
        assert len(draws) == before  # nothing drawn on the way in
        await wait_until(pilot, lambda: "word299" in drawn(transcript, row))
        # A few frames' worth, however many deltas came.
        assert len(draws) - before < 10
        # Folded, its streaming transcript is not drawn at all: its state line says
        # "writing" all along.
        transcript.toggle_fold(row)
        transcript.flush_now()
        before = len(draws)
        for n in range(300):
            bus.publish(TextDelta(text=f"more{n} ", agent_id=agent, parent_call_id=parent))
        answer = row.children[-1]
        await wait_until(pilot, lambda: "more299" in answer.plain_text())
        await pilot.pause(0.05)
        assert len(draws) == before
