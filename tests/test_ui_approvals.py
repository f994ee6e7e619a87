"""Approval questions in the full app (Pilot, loopback server): Ctrl+G then keys, and the
mouse, answer; typing while a question is open still queues, Ctrl+C denies and restores
the queue. (What typing at any speed does: test_ui_approval_typing.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from ink_tui.control.run_settings import RunSettings
from ink_tui.ui.app import InkApp
from ink_tui.ui.widgets.approval_question import ApprovalQuestion
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import make_app, type_text, wait_until

ASK = RunSettings(approval="ask")


def question_of(pilot: Pilot) -> ApprovalQuestion:
    return pilot.app.query_one(ApprovalQuestion)


async def start(pilot: Pilot, text: str) -> ApprovalQuestion:
    app = pilot.app
    assert isinstance(app, InkApp)
    await wait_until(pilot, lambda: app.controller is not None, what="the controller")
    await type_text(pilot, text)
    await pilot.press("enter")
    question = question_of(pilot)
    await wait_until(pilot, lambda: question.is_open, what="the question")
    await pilot.pause()
    return question


async def settled(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, InkApp) and app.controller is not None
    await app.controller.wait_idle()
    await pilot.pause(0.05)


def tool_results(server: ScriptedServer, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index]["messages"] if m["role"] == "tool"]


async def test_y_allows_once_and_the_question_shows_the_command(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await start(pilot, "make it")
        # The focus stays in the input; Ctrl+G moves it to the question.
        assert app.prompt.has_focus and not question.has_focus
        assert "bash touch made" in str(question.query_one("#approval-call").render())
        assert not (workspace / "made").exists()
        await pilot.press("ctrl+g")
        assert question.has_focus
        await pilot.press("y")
        await settled(pilot)
        assert (workspace / "made").exists()
        assert not question.is_open
        assert app.prompt.has_focus


async def test_s_allows_the_command_prefix_for_the_session(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("bash", {"command": "touch one"})]),
        tool_reply([("bash", {"command": "touch two"})]),
        text_reply("done"),
    )
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        await start(pilot, "two files")
        await pilot.press("ctrl+g", "s")
        await settled(pilot)
    assert (workspace / "one").exists() and (workspace / "two").exists()
    assert len(recorder.of("approval_request")) == 1


async def test_a_click_on_a_choice_answers_and_an_edit_shows_its_diff(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("edit", _edit_args())]), text_reply("done"))
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await start(pilot, "rename")
        preview = str(question.query_one("#approval-preview").render())
        assert "-    return sum(xs)" in preview and "+    return sum(xs, 0)" in preview
        await pilot.click("#approval-choices .choice")  # the first: allow once
        await settled(pilot)
    assert "sum(xs, 0)" in (workspace / "sum.py").read_text()
    assert not (workspace / ".ink" / "config.toml").exists()


async def test_3_saves_an_always_rule_to_the_workspace_config(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("edit", _edit_args())]), text_reply("done"))
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(pilot, lambda: app.controller is not None)
        from ink_tui.assemble import _save_rule

        assert app.controller is not None
        app.controller.approvals.save_rule = lambda rule: _save_rule(workspace, rule)
        await start(pilot, "rename")
        await pilot.press("ctrl+g", "3")
        await settled(pilot)
    assert (workspace / ".ink" / "config.toml").read_text() == '[approval]\nallow = ["edit"]\n'


async def test_deny_with_a_reason_the_model_receives(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "rm sum.py"})]), text_reply("ok"))
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await start(pilot, "clean up")
        await pilot.press("ctrl+g", "n")
        reason = question.query_one("#approval-reason")
        assert reason.has_focus
        for key in "keep it":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await settled(pilot)
    assert (workspace / "sum.py").exists()
    [result] = tool_results(server, 1)
    assert "Denied" in result and "Their reason: keep it" in result


async def test_a_steer_typed_during_a_question_is_queued_and_reaches_the_next_call(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await start(pilot, "make it")
        # Letters (choices or not) go to the input: typing is never lost or an answer.
        for key in "use":
            await pilot.press(key)
        assert app.prompt.has_focus and app.prompt.text == "use"
        await type_text(pilot, " pytest")
        await pilot.press("enter")
        await pilot.pause()
        assert app.controller is not None
        assert [e.text for e in app.controller.queue.entries] == ["use pytest"]
        assert question.is_open  # the steer did not answer it
        await pilot.press("ctrl+g")  # to the question
        assert question.has_focus
        await pilot.press("1")
        await settled(pilot)
    steer = server.requests[1]["messages"][-1]
    assert steer["role"] == "user" and "use pytest" in steer["content"]


async def test_ctrl_c_during_a_question_denies_aborts_and_restores_the_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch never"})]))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await start(pilot, "go")
        await pilot.press("x")  # goes to the input
        await pilot.press("enter")  # queued as a steer
        await pilot.pause()
        await pilot.press("ctrl+c")
        await settled(pilot)
        assert not question.is_open
        assert app.prompt.text == "x"
    assert not (workspace / "never").exists()
    [resolved] = recorder.of("approval_resolved")
    assert (resolved.decision, resolved.by) == ("deny", "interrupt")
    assert [e.stop_reason for e in recorder.of("run_end")] == ["aborted"]


async def test_typing_into_a_draft_keeps_focus_in_the_input(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(tool_reply([("bash", {"command": "touch made"})], gate=gate), text_reply("ok"))
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(pilot, lambda: app.controller is not None)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_gate(gate)
        await type_text(pilot, "yes and")  # a draft is being typed when the question opens
        gate.open()
        question = question_of(pilot)
        await wait_until(pilot, lambda: question.is_open)
        await pilot.pause()
        assert app.prompt.has_focus
        await pilot.press("y")
        assert app.prompt.text == "yes andy"
        assert question.is_open
        await pilot.press("ctrl+g", "y")
        await settled(pilot)
    assert (workspace / "made").exists()


def _edit_args() -> dict:
    return {"path": "sum.py", "edits": [{"old_text": "sum(xs)", "new_text": "sum(xs, 0)"}]}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


async def test_keys_typed_right_after_an_answer_reach_the_input(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "sleep 1"})]), text_reply("done"))
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        await start(pilot, "wait")
        await pilot.press("ctrl+g", "y", "m", "i", "n", "d")
        await pilot.pause()
        assert app.prompt.text == "mind"
        await settled(pilot)
