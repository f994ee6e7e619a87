"""Every rule of "Where the loop takes queued input", against the loopback server."""

from __future__ import annotations

from pathlib import Path

from ink_tui.control.run_settings import RunSettings
from tests.run_helpers import last_roles, make_controller, user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply


async def test_worked_example_steers_together_then_follow_ups_one_by_one(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(
        text_reply("Working on it.", gate=gate),
        text_reply("Keeping the interface."),
        text_reply("Here is the change note."),
        text_reply("Here are the docs."),
    )
    controller, events = make_controller(server, workspace)
    controller.submit("fix the sum function")
    await wait_gate(gate)
    controller.submit("F1 write a change note", "follow_up")
    controller.submit("S2 do not change the interface", "steer")
    controller.submit("F3 add usage docs", "follow_up")
    controller.submit("S4 keep the return type", "steer")
    gate.open()
    await controller.wait_idle()

    assert len(server.requests) == 4
    r1, r2, r3 = server.requests[1:]
    assert user_texts(r1)[-2:] == ["S2 do not change the interface", "S4 keep the return type"]
    assert not any(t.startswith("F") for t in user_texts(r1))
    assert user_texts(r2)[-1] == "F1 write a change note"
    assert "F3 add usage docs" not in user_texts(r2)
    assert user_texts(r3)[-1] == "F3 add usage docs"
    # One run from start to end: follow-ups and steers continue it.
    assert len(events.of("run_start")) == 1
    end = events.of("run_end")[0]
    assert end.stop_reason == "completed"
    assert end.turns == 4
    assert end.usage.input_tokens == 40
    injected = [(e.kind, e.text[:2]) for e in events.of("user_message")]
    assert injected == [
        ("prompt", "fi"),
        ("steer", "S2"),
        ("steer", "S4"),
        ("follow_up", "F1"),
        ("follow_up", "F3"),
    ]
    assert controller.state == "idle" and len(controller.queue) == 0


async def test_steer_during_tools_reaches_the_next_request_after_the_results(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(tool_reply([("ls", {})], gate=gate), text_reply("Noted."))
    controller, _ = make_controller(server, workspace)
    controller.submit("look around")
    await wait_gate(gate)
    controller.submit("only look at python files")
    gate.open()
    await controller.wait_idle()

    second = server.requests[1]
    assert last_roles(second, 3) == ["assistant", "tool", "user"]
    assert second["messages"][-1]["content"] == "only look at python files"
    assert "README.md" in second["messages"][-2]["content"]


async def test_follow_up_waits_until_the_answer_ends(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("ls", {})], gate=gate),
        text_reply("Listed."),
        text_reply("Summary written."),
    )
    controller, _ = make_controller(server, workspace)
    controller.submit("look around")
    await wait_gate(gate)
    controller.submit("then summarise", "follow_up")
    gate.open()
    await controller.wait_idle()

    assert len(server.requests) == 3
    assert "then summarise" not in user_texts(server.requests[1])
    assert last_roles(server.requests[1], 1) == ["tool"]
    assert user_texts(server.requests[2])[-1] == "then summarise"
    assert last_roles(server.requests[2], 2) == ["assistant", "user"]


async def test_skip_flag_keeps_one_at_a_time_steers_apart(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Hm.", gate=gate), text_reply("One."), text_reply("Two."))
    settings = RunSettings(steering_mode="one-at-a-time")
    controller, _ = make_controller(server, workspace, settings=settings)
    controller.submit("start")
    await wait_gate(gate)
    controller.submit("S1")
    controller.submit("S2")
    gate.open()
    await controller.wait_idle()

    # Taken at the stop point, S1 alone; the next iteration's top skips its poll, so S2
    # does not join it, and goes in at the following stop point.
    assert user_texts(server.requests[1])[-1] == "S1"
    assert "S2" not in user_texts(server.requests[1])
    assert user_texts(server.requests[2])[-1] == "S2"
    assert len(server.requests) == 3


async def test_follow_up_mode_all_sends_every_follow_up_at_once(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Hm.", gate=gate), text_reply("Both done."))
    settings = RunSettings(follow_up_mode="all")
    controller, _ = make_controller(server, workspace, settings=settings)
    controller.submit("start")
    await wait_gate(gate)
    controller.submit("F1", "follow_up")
    controller.submit("F2", "follow_up")
    gate.open()
    await controller.wait_idle()
    assert user_texts(server.requests[1])[-2:] == ["F1", "F2"]
    assert len(server.requests) == 2


async def test_modes_are_read_once_when_the_run_starts(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Hm.", gate=gate), text_reply("ok"))
    controller, _ = make_controller(server, workspace)
    controller.submit("start")
    await wait_gate(gate)
    controller.settings.steering_mode = "one-at-a-time"
    controller.submit("S1")
    controller.submit("S2")
    gate.open()
    await controller.wait_idle()
    assert user_texts(server.requests[1])[-2:] == ["S1", "S2"]


async def test_shell_lines_are_never_taken_by_the_loop_and_run_after_completion(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Hm.", gate=gate), text_reply("ok"))
    controller, events = make_controller(server, workspace)
    controller.submit("start")
    await wait_gate(gate)
    controller.submit("!echo from-the-shell")
    controller.submit("S1")
    gate.open()
    await controller.wait_idle()

    assert len(server.requests) == 2
    for request in server.requests:
        assert not any("from-the-shell" in t for t in user_texts(request))
    runs = events.of("run_start")
    assert [r.kind for r in runs] == ["agent", "shell"]
    shell_end = events.of("tool_end")[-1]
    assert shell_end.call.arguments == {"command": "echo from-the-shell"}
    assert "from-the-shell" in shell_end.result.content
    # The shell line's output is not part of the conversation.
    assert not any("from-the-shell" in getattr(m, "content", "") for m in controller.history)


async def test_max_iterations_after_tool_replies_then_queue_runs_as_new_run(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("ls", {})], gate=gate),
        tool_reply([("ls", {})]),
        text_reply("second run answer"),
    )
    settings = RunSettings()
    settings.loop.max_iterations = 2
    controller, events = make_controller(server, workspace, settings=settings)
    controller.submit("loop forever")
    await wait_gate(gate)
    controller.submit("!echo queued-shell")
    controller.submit("next task", "follow_up")
    gate.open()
    await controller.wait_idle()

    ends = events.of("run_end")
    assert [e.stop_reason for e in ends] == ["max_iterations", "completed", "completed"]
    assert [r.kind for r in events.of("run_start")] == ["agent", "shell", "agent"]
    assert len(server.requests) == 3
    # The follow-up started a run of its own, with the history so far.
    assert user_texts(server.requests[2])[-1] == "next task"
    assert last_roles(server.requests[2], 3) == ["assistant", "tool", "user"]
    assert any(n.kind == "max_iterations" for n in events.of("notice"))


async def test_reply_cut_off_by_output_limit_runs_none_of_its_calls(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("write", {"path": "big.txt", "content": "x"})], finish="length"),
        text_reply("ok, smaller then"),
    )
    controller, _ = make_controller(server, workspace)
    controller.submit("write a big file")
    await controller.wait_idle()
    assert not (workspace / "big.txt").exists()
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "cut off by the output token limit" in tool_message["content"]


async def test_invalid_tool_arguments_go_back_to_the_model(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("read", {"file": "README.md"})]), text_reply("fixed"))
    controller, _ = make_controller(server, workspace)
    controller.submit("read it")
    await controller.wait_idle()
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "Invalid arguments for read" in tool_message["content"]
    assert "'path' is a required property" in tool_message["content"]
