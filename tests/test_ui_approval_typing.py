"""Typed text is never an answer (Pilot, the full app, loopback server).

With an approval question open, whatever the user types (key by key, as a burst of
keys that all reach the app before it handles the first, as a paste) stays their text,
whole, in the input or the queue, and the question stays open. Answering takes Ctrl+G
(then y/s/a/n, 1-4, arrows and Enter) or a click; once answered, a question takes no
second answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from ink_tui.control.run_settings import RunSettings
from ink_tui.ui.app import InkApp
from ink_tui.ui.widgets.approval_question import ApprovalQuestion
from ink_tui.ui.widgets.hint_row import HintRow
from tests.run_helpers import Recorder
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import make_app, type_text, wait_until

ASK = RunSettings(approval="ask")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def _key(character: str) -> events.Key:
    names = {" ": "space", "\r": "enter"}
    return events.Key(names.get(character, character), None if character == "\r" else character)


async def press_slowly(pilot: Pilot, text: str) -> None:
    """One key at a time, each handled before the next is sent (a person typing)."""
    for character in text:
        await pilot.press(_key(character).key)


async def burst(pilot: Pilot, text: str) -> None:
    """Every key in the app's queue before it handles the first: a paste without
    bracketed paste, a fast typist, keys sent while the app was busy drawing."""
    for character in text:
        pilot.app.post_message(_key(character))
    await pilot.pause()


async def paste(pilot: Pilot, text: str) -> None:
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


WAYS = {"key by key": press_slowly, "burst": burst, "paste": paste}


async def open_question(pilot: Pilot, prompt: str = "make it") -> ApprovalQuestion:
    app = pilot.app
    assert isinstance(app, InkApp)
    await wait_until(pilot, lambda: app.controller is not None, what="the controller")
    await type_text(pilot, prompt)
    await pilot.press("enter")
    question = app.query_one(ApprovalQuestion)
    await wait_until(pilot, lambda: question.is_open, what="the question")
    await pilot.pause()
    return question


def answers(recorder: Recorder) -> list[str]:
    return [e.decision for e in recorder.of("approval_resolved")]


def approval_notices(recorder: Recorder) -> list[str]:
    return [n.text for n in recorder.of("notice") if n.kind == "approval"]


def keys_line(question: ApprovalQuestion) -> str:
    return str(question.query_one("#approval-keys").render())


def choices_line(question: ApprovalQuestion) -> str:
    return "  ".join(str(c.render()) for c in question.query(".choice"))


async def settled(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, InkApp) and app.controller is not None
    await app.controller.wait_idle()
    await pilot.pause(0.05)


@pytest.mark.parametrize("text", ["now stop", "yes do it", "y"])
@pytest.mark.parametrize("way", list(WAYS))
async def test_typed_text_stays_in_the_input_and_the_question_stays_open(
    server: ScriptedServer, workspace: Path, text: str, way: str
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot)
        assert app.prompt.has_focus and app.prompt.text == ""
        await WAYS[way](pilot, text)
        await wait_until(pilot, lambda: app.prompt.text == text, what=f"{text!r} in the input")
        await pilot.pause(0.05)
        assert app.prompt.text == text
        assert app.prompt.has_focus
        assert question.is_open and not question.has_class("-reason")
        assert answers(recorder) == [] and approval_notices(recorder) == []
        assert not (workspace / "made").exists()
        # Still answerable, deliberately.
        await pilot.press("ctrl+g", "y")
        await settled(pilot)
        assert answers(recorder) == ["allow"]
        assert app.prompt.text == text
    assert (workspace / "made").exists()


@pytest.mark.parametrize("way", ["key by key", "burst"])
async def test_a_line_typed_with_enter_is_queued_whole_and_answers_nothing(
    server: ScriptedServer, workspace: Path, way: str
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot)
        await WAYS[way](pilot, "now stop\r")
        assert app.controller is not None
        controller = app.controller
        await wait_until(pilot, lambda: bool(controller.queue.entries), what="the steer")
        assert [(e.text, e.mode) for e in controller.queue.entries] == [("now stop", "steer")]
        assert question.is_open and answers(recorder) == []
        assert app.prompt.text == ""
        await pilot.press("ctrl+g", "n", "enter")  # deny, no reason
        await settled(pilot)
    assert answers(recorder) == ["deny"]
    assert not (workspace / "made").exists()


async def test_ctrl_g_then_y_allows_once_and_the_question_shows_its_keys(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot)
        hints = app.query_one(HintRow)
        # Unfocused: how to get there, and no key on the choices.
        assert "Ctrl+G to answer · or click a choice" in keys_line(question)
        assert "[y]" not in choices_line(question)
        assert "Ctrl+G answers the question" in str(hints.render())
        await pilot.press("ctrl+g")
        assert question.has_focus
        assert "y/s/a/n or ←/→ and Enter to answer · Esc back to the input" in keys_line(question)
        assert "[y] allow once" in choices_line(question) and "[n] deny" in choices_line(question)
        assert "Esc back to the input" in str(hints.render())
        await pilot.press("y")
        await settled(pilot)
        assert answers(recorder) == ["allow"]
        assert app.prompt.has_focus
    assert (workspace / "made").exists()


@pytest.mark.parametrize("key", ["escape", "ctrl+g", "tab"])
async def test_leaving_the_question_answers_nothing(
    server: ScriptedServer, workspace: Path, key: str
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot)
        await pilot.press("ctrl+g")
        assert question.has_focus
        await pilot.press(key)
        assert app.prompt.has_focus and not question.answering
        assert question.is_open and answers(recorder) == []
        assert "Ctrl+G to answer" in keys_line(question)
        # The run goes on (Escape did not interrupt it), and the question still answers.
        assert app.controller is not None and app.controller.state == "running"
        await pilot.press("ctrl+g", "n", "enter")  # deny, no reason
        await settled(pilot)
    assert answers(recorder) == ["deny"]


async def test_tab_from_the_input_never_reaches_the_question(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot)
        for key in ("tab", "tab", "shift+tab", "shift+tab", "shift+tab"):
            await pilot.press(key)
            assert not question.has_focus_within
        app.prompt.focus()
        await pilot.press("y")
        assert question.is_open and answers(recorder) == []
        await pilot.press("ctrl+c")
        await settled(pilot)


async def test_a_letter_that_is_no_choice_takes_the_focus_back_to_the_input(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot)
        await pilot.press("ctrl+g", "w")
        assert app.prompt.has_focus and app.prompt.text == "w"
        # The same in a burst: every key after the first lands in the input too.
        await pilot.press("ctrl+g")
        await burst(pilot, "hat now")
        await wait_until(pilot, lambda: app.prompt.text == "what now")
        assert question.is_open and answers(recorder) == []
        # A paste that reaches the question goes into the input.
        await pilot.press("ctrl+g")
        assert question.has_focus
        await paste(pilot, " yes")
        assert app.prompt.text == "what now yes"
        assert app.prompt.has_focus and question.is_open and answers(recorder) == []
        await pilot.press("ctrl+c")
        await settled(pilot)


async def test_a_burst_after_the_answer_makes_no_second_answer(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        await open_question(pilot)
        await pilot.press("ctrl+g")
        # The first y answers; the rest were on their way to the question already.
        await burst(pilot, "yyyn 4y")
        await wait_until(pilot, lambda: app.prompt.text == "yyn 4y", what="the rest in the input")
        await settled(pilot)
        assert answers(recorder) == ["allow"]
        assert approval_notices(recorder) == []
        assert app.prompt.text == "yyn 4y"
    assert (workspace / "made").exists()


async def test_clicks_after_the_answer_do_nothing(server: ScriptedServer, workspace: Path) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot)
        first = question.query(".choice").first()
        # Both clicks reach the question before the answer has closed it.
        await pilot.click(first)
        first.post_message(type(first).Picked("deny"))
        await settled(pilot)
        assert answers(recorder) == ["allow"] and approval_notices(recorder) == []
        assert app.prompt.has_focus
    assert (workspace / "made").exists()


async def test_the_reason_box_opened_deliberately_takes_the_keys_typed_after_n(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "rm sum.py"})]), text_reply("ok"))
    app, recorder = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        question = await open_question(pilot, "clean up")
        await pilot.press("ctrl+g")
        # Typed fast: the letters after "n" were on their way to the question.
        await burst(pilot, "nkeep it")
        reason = question.query_one("#approval-reason")
        await wait_until(pilot, lambda: getattr(reason, "value", "") == "keep it")
        assert reason.has_focus and "Esc back to the choices" in keys_line(question)
        assert app.prompt.text == ""
        await pilot.press("enter")
        await settled(pilot)
    assert answers(recorder) == ["deny"]
    [resolved] = recorder.of("approval_resolved")
    assert resolved.reason == "keep it"
    assert (workspace / "sum.py").exists()
