"""Interrupt, abort, failure and settling, end to end against the loopback server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from ink_tui.control.run_settings import RunSettings
from ink_tui.core.tool_api import ToolContext, ToolResult
from ink_tui.tools import default_tools
from ink_tui.tools.process_group import group_alive
from tests.run_helpers import make_controller, user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, error_reply, text_reply, tool_reply


async def test_abort_during_stream_hangs_up_and_restores_the_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Partial answer that never ends", pieces=4, gate=gate))
    controller, events = make_controller(server, workspace)
    controller.submit("go")
    await wait_gate(gate)
    await events.wait_for(lambda e: e.type == "text_delta")
    controller.submit("S1 steer")
    controller.submit("F1 follow", "follow_up")
    assert controller.interrupt() == "aborting"
    # Still running until the run has settled.
    assert controller.state == "running"
    await controller.wait_idle()
    assert await asyncio.to_thread(server.disconnected.wait, 2)

    assert controller.state == "idle"
    end = events.of("run_end")[-1]
    assert end.stop_reason == "aborted"
    restored = events.of("input_restored")
    assert len(restored) == 1
    assert restored[0].text == "S1 steer\n\nF1 follow"
    assert restored[0].count == 2
    assert any(n.text == "Restored 2 queued inputs to the editor." for n in events.of("notice"))
    assert len(controller.queue) == 0
    # What was shown before the abort stays in the history.
    assert controller.history[-1].text.startswith("Partial")  # type: ignore[union-attr]
    assert controller.history[-1].finish_reason == "aborted"  # type: ignore[union-attr]


async def test_abort_during_bash_kills_the_whole_process_group(
    server: ScriptedServer, workspace: Path
) -> None:
    pid_file = workspace / "pid"
    command = (
        f"echo $$ > {pid_file}; (trap '' TERM; sleep 30) & (trap '' TERM; sleep 30) & sleep 30"
    )
    server.push(
        tool_reply([("bash", {"command": command}), ("read", {"path": "README.md"})]),
        text_reply("after the interrupt"),
    )
    controller, events = make_controller(server, workspace)
    controller.submit("run it")
    await events.wait_for(lambda e: e.type == "tool_start" and e.call.name == "bash")
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    pgid = int(pid_file.read_text())
    await asyncio.sleep(0.2)  # let the children start and install their traps
    started = time.monotonic()
    controller.interrupt()
    await controller.wait_idle()
    assert time.monotonic() - started < 4
    # Killed: nothing of the group runs any more. Its orphans may stay zombies a while
    # (this test process is no subreaper, and some containers' PID 1 never reaps).
    deadline = time.monotonic() + 5
    while group_alive(pgid):
        assert time.monotonic() < deadline, "the group still runs after the abort"
        await asyncio.sleep(0.01)

    # Every call of the reply has a result, so the next run's history is valid.
    tool_messages = [m for m in controller.history if m.role == "tool"]
    assert [m.call_id for m in tool_messages] == ["call_0_bash", "call_1_read"]
    assert all(m.is_error for m in tool_messages)
    assert "before this call started" in tool_messages[1].content

    controller.submit("carry on")
    await controller.wait_idle()
    roles = [m["role"] for m in server.requests[1]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]


class IgnoresAbort:
    name = "stubborn"
    description = "Never listens."
    parameters: dict[str, Any] = {"type": "object"}  # noqa: RUF012
    concurrency_safe = False

    def __init__(self) -> None:
        # It returns only once released, so a test knows it was still working.
        self.release = asyncio.Event()
        self.returned = False

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await self.release.wait()
        self.returned = True
        return ToolResult("LATE RESULT")


async def test_tool_ignoring_the_abort_is_abandoned_after_the_grace(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("stubborn", {})]))
    settings = RunSettings()
    settings.loop.abort_grace_s = 0.2
    stubborn = IgnoresAbort()
    controller, events = make_controller(
        server, workspace, tools=[*default_tools(), stubborn], settings=settings
    )
    controller.submit("go")
    await events.wait_for(lambda e: e.type == "tool_start")
    started = time.monotonic()
    controller.interrupt()
    await controller.wait_idle()
    # Settled after the grace, while the tool still held on: abandoned, not waited for.
    assert time.monotonic() - started >= 0.2
    assert not stubborn.returned
    result = next(m for m in controller.history if m.role == "tool")
    assert result.content == "Did not stop within 0.2 s of the interrupt; result abandoned."
    # Its late result, once there, goes nowhere.
    stubborn.release.set()
    for _ in range(20):
        await asyncio.sleep(0)
    assert stubborn.returned
    assert all("LATE RESULT" not in getattr(m, "content", "") for m in controller.history)


async def test_failed_request_reports_the_cause_and_restores_the_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("ls", {})], gate=gate),
        error_reply(400, "invalid request: unknown parameter frobnicate"),
    )
    controller, events = make_controller(server, workspace)
    controller.submit("go")
    await wait_gate(gate)
    controller.submit("!echo never runs")
    controller.submit("follow", "follow_up")
    gate.open()
    await controller.wait_idle()

    end = events.of("run_end")[-1]
    assert end.stop_reason is None
    assert "invalid request: unknown parameter frobnicate" in (end.error or "")
    errors = [n for n in events.of("notice") if n.level == "error"]
    assert errors and "unknown parameter frobnicate" in errors[0].text
    assert events.of("input_restored")[0].text == "!echo never runs\n\nfollow"
    assert [r.kind for r in events.of("run_start")] == ["agent"]
    # The tool work done before the failure is kept.
    assert [m.role for m in controller.history] == ["user", "assistant", "tool"]
    assert controller.state == "idle"


async def test_second_interrupt_before_settling_exits_130(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("stubborn", {})]))
    stubborn = IgnoresAbort()
    controller, events = make_controller(server, workspace, tools=[*default_tools(), stubborn])
    controller.submit("go")
    await events.wait_for(lambda e: e.type == "tool_start")
    assert controller.interrupt() == "aborting"
    assert controller.interrupt() == "exit"
    assert controller.state == "exited"
    assert controller.exit_code == 130
    states = [(s.state, s.interrupts) for s in events.of("state")]
    assert states[-2:] == [("running", 1), ("exited", 0)]
    assert events.of("state")[-1].exit_code == 130
    stubborn.release.set()
    await controller.aclose()


async def test_interrupt_when_idle_is_left_to_the_front_end(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, _ = make_controller(server, workspace)
    assert controller.interrupt() == "idle"
    assert controller.state == "idle"


async def test_pull_queue_to_editor_keeps_the_run_going(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("still going", gate=gate))
    controller, events = make_controller(server, workspace)
    controller.submit("go")
    await wait_gate(gate)
    controller.submit("a")
    controller.submit("b", "follow_up")
    assert controller.pull_queue_to_editor() == 2
    assert events.of("input_restored")[0].text == "a\n\nb"
    assert controller.state == "running"
    gate.open()
    await controller.wait_idle()
    assert events.of("run_end")[-1].stop_reason == "completed"
    assert len(server.requests) == 1


async def test_edit_of_an_entry_taken_meanwhile_is_queued_again(
    server: ScriptedServer, workspace: Path
) -> None:
    gate1, gate2 = Gate(), Gate()
    server.push(
        tool_reply([("ls", {})], gate=gate1),
        text_reply("took the steer", gate=gate2),
        text_reply("took the edit"),
    )
    controller, _ = make_controller(server, workspace)
    controller.submit("go")
    await wait_gate(gate1)
    controller.submit("original steer")
    entry_id = controller.queue.entries[0].id
    gate1.open()
    await wait_gate(gate2)  # the loop has taken the entry while the user was editing it
    controller.edit_entry(entry_id, "edited steer")
    assert [e.text for e in controller.queue.entries] == ["edited steer"]
    gate2.open()
    await controller.wait_idle()
    assert user_texts(server.requests[1])[-1] == "original steer"
    assert user_texts(server.requests[2])[-1] == "edited steer"


async def test_queue_updates_publish_the_whole_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("x", gate=gate), text_reply("y"))
    controller, events = make_controller(server, workspace)
    controller.submit("go")
    await wait_gate(gate)
    controller.submit("one")
    controller.submit("two", "follow_up")
    first = controller.queue.entries[0].id
    controller.toggle_entry_mode(first)
    controller.move_entry(first, 1)
    updates = events.of("queue_update")
    assert [(v.text, v.mode) for v in updates[-1].entries] == [
        ("two", "follow_up"),
        ("one", "follow_up"),
    ]
    controller.remove_entry(first)
    gate.open()
    await controller.wait_idle()
    assert user_texts(server.requests[1])[-1] == "two"
    seqs = [e.seq for e in events.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    run_ids = {e.run_id for e in events.events if e.type in ("text_delta", "run_end")}
    assert run_ids == {"run-1"}


async def test_idle_shell_line_runs_locally(server: ScriptedServer, workspace: Path) -> None:
    controller, events = make_controller(server, workspace)
    controller.submit("!ls")
    await controller.wait_idle()
    assert server.requests == []
    end = events.of("tool_end")[0]
    assert "README.md" in end.result.content
    assert controller.history == []


async def _abort_with_queue(server: ScriptedServer, workspace: Path, policy: str):
    gate = Gate()
    server.push(text_reply("working", gate=gate))
    settings = RunSettings(interrupt_queue=policy)  # type: ignore[arg-type]
    controller, events = make_controller(server, workspace, settings=settings)
    controller.submit("go")
    await wait_gate(gate)
    controller.submit("kept one")
    controller.submit("kept two", "follow_up")
    controller.interrupt()
    await controller.wait_idle()
    return controller, events


async def test_interrupt_queue_keep_leaves_it_paused_until_resumed(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, events = await _abort_with_queue(server, workspace, "keep")
    assert [e.text for e in controller.queue.entries] == ["kept one", "kept two"]
    assert controller.queue_paused and events.of("queue_update")[-1].paused
    assert not events.of("input_restored")
    assert any(n.kind == "paused" for n in events.of("notice"))
    assert len(server.requests) == 1

    server.push(text_reply("one"), text_reply("two"))
    assert controller.resume_queue()
    await controller.wait_idle()
    assert not controller.queue_paused
    assert user_texts(server.requests[1])[-1] == "kept one"
    assert user_texts(server.requests[2])[-1] == "kept two"


async def test_interrupt_queue_keep_resumes_after_the_next_submitted_line(
    server: ScriptedServer, workspace: Path
) -> None:
    controller, _ = await _abort_with_queue(server, workspace, "keep")
    server.push(text_reply("new"), text_reply("two"))
    controller.submit("something new")
    await controller.wait_idle()
    # Unpaused, the queue works as usual: the kept steer joins the new run's first
    # request, the kept follow-up comes when that answer ends.
    assert user_texts(server.requests[1])[-2:] == ["something new", "kept one"]
    assert user_texts(server.requests[2])[-1] == "kept two"
    assert not controller.queue_paused


async def test_interrupt_queue_send_runs_the_queue_next(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("working", gate=gate), text_reply("one"), text_reply("two"))
    settings = RunSettings(interrupt_queue="send")
    controller, events = make_controller(server, workspace, settings=settings)
    controller.submit("go")
    await wait_gate(gate)
    controller.submit("sent one")
    controller.submit("sent two", "follow_up")
    controller.interrupt()
    await controller.wait_idle()
    # The first entry starts a run; the follow-up joins it when its answer ends.
    assert [e.stop_reason for e in events.of("run_end")] == ["aborted", "completed"]
    assert [user_texts(r)[-1] for r in server.requests[1:]] == ["sent one", "sent two"]
    assert not events.of("input_restored")
