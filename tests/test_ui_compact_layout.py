"""A short terminal keeps the conversation: the panels give way before the transcript.

At 60x20 with the activity panel, an approval question and two queued entries, the
transcript still shows rows of the answer while the user types; the question stays open
and the typed text stays in the input (Pilot, the full app, loopback server).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from ink_tui.control.run_settings import RunSettings
from ink_tui.ui.app import InkApp
from ink_tui.ui.fit_text import ELLIPSIS, fit_parts
from ink_tui.ui.widgets.activity_panel import ActivityPanel
from ink_tui.ui.widgets.approval_question import ApprovalQuestion
from ink_tui.ui.widgets.hint_row import HintRow, hint_text
from ink_tui.ui.widgets.prompt_input import PromptInput
from ink_tui.ui.widgets.queue_list import QueueList
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer, tool_reply
from tests.test_ui_demo_tour import demo_app
from tests.ui_helpers import make_app, type_text, wait_until

ASK = RunSettings(approval="ask")
ANSWER = "I will run the test suite first, then look at the failing cart totals."
COMMAND = "pytest -q tests/test_cart.py --maxfail=1 -k 'total and not slow' --durations=5"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def push_question(server: ScriptedServer) -> None:
    server.push(tool_reply([("bash", {"command": COMMAND})], text=ANSWER))


async def crowd(pilot: Pilot) -> ApprovalQuestion:
    """A question open, the activity panel up and two entries queued."""
    app = pilot.app
    assert isinstance(app, InkApp)
    await wait_until(pilot, lambda: app.controller is not None, what="the controller")
    await type_text(pilot, "fix the cart totals")
    await pilot.press("enter")
    question = app.query_one(ApprovalQuestion)
    await wait_until(pilot, lambda: question.is_open, what="the question")
    await type_text(pilot, "keep the public API")
    await pilot.press("enter")
    await type_text(pilot, "then add a changelog entry")
    await pilot.press("alt+enter")
    queue = app.query_one(QueueList)
    await wait_until(pilot, lambda: queue.count == 2, what="two queued entries")
    await pilot.pause()
    return question


def assert_whole_words(drawn: str, whole: str) -> None:
    words = set(whole.split())
    pieces = drawn.split()
    for index, piece in enumerate(pieces):
        if piece in words:
            continue
        last = index == len(pieces) - 1
        assert last and piece.endswith(ELLIPSIS), f"{piece!r} cut mid-word in {drawn!r}"
        head = piece.removesuffix(ELLIPSIS)
        assert head in words or not head, f"{piece!r} cut mid-word in {drawn!r}"


def shown_rows(transcript: Transcript) -> list[str]:
    return [transcript.render_line(y).text for y in range(transcript.size.height)]


async def test_typing_at_60x20_with_everything_open_keeps_rows_of_the_answer(
    server: ScriptedServer, workspace: Path
) -> None:
    push_question(server)
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(60, 20)) as pilot:
        question = await crowd(pilot)
        for key in "now stop":
            await pilot.press("space" if key == " " else key)
        transcript = app.query_one(Transcript)
        await wait_until(
            pilot,
            lambda: any("test suite" in row for row in shown_rows(transcript)),
            what="the answer's rows",
        )
        assert transcript.size.height >= 4
        assert app.query_one(PromptInput).text == "now stop"
        assert question.is_open and question.accepting
        # The panels gave way: each draws its compact form.
        assert app.query_one(ActivityPanel).has_class("-compact")
        queue = app.query_one(QueueList)
        assert queue.has_class("-compact")
        assert "2 queued" in str(queue.query_one(".header").render())
        # Nothing of the hint row or the status bar is cut mid-word: each word drawn is
        # a word of the whole line (as drawn on a row wide enough), but for a last one
        # that is cut, which ends in "…".
        hints, status = app.query_one(HintRow), app.query_one(StatusBar)
        for drawn, whole in (
            (hints.render().plain, hint_text(hints.hints()).plain),
            (status.render().plain, fit_parts(status._parts, 10_000).plain),
        ):
            assert len(drawn) <= 58 < len(whole), (drawn, whole)
            assert_whole_words(drawn, whole)


async def test_at_a_tall_terminal_nothing_gives_way(
    server: ScriptedServer, workspace: Path
) -> None:
    push_question(server)
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 40)) as pilot:
        question = await crowd(pilot)
        await pilot.pause()
        assert not app.query_one(ActivityPanel).has_class("-compact")
        assert not app.query_one(QueueList).has_class("-compact")
        assert not question.has_class("-compact")


async def test_growing_the_terminal_brings_the_panels_back(
    server: ScriptedServer, workspace: Path
) -> None:
    push_question(server)
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(60, 20)) as pilot:
        await crowd(pilot)
        queue = app.query_one(QueueList)
        await wait_until(pilot, lambda: queue.has_class("-compact"), what="the count")
        await pilot.resize_terminal(100, 44)
        await wait_until(pilot, lambda: not queue.has_class("-compact"), what="the full queue")
        assert not app.query_one(ActivityPanel).has_class("-compact")


async def test_the_first_screen_teaches_and_gives_way_at_the_first_prompt(
    server: ScriptedServer, workspace: Path
) -> None:
    from tests.scripted_server import text_reply

    server.push(text_reply("Hello there."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        welcome = str(app.query_one("#welcome").render())
        for words in ("scripted-model", "Enter", "Alt+Enter", "Ctrl+C", "Alt+Up", "Ctrl+G"):
            assert words in welcome
        assert "/help" in welcome and "Ctrl+P" in welcome
        assert workspace.name in welcome
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.query("#welcome"), what="the welcome to go")
        transcript = app.query_one(Transcript)
        await wait_until(pilot, lambda: "Hello there." in transcript.plain_text(), what="reply")


async def test_the_demo_welcome_says_offline_demo(server: ScriptedServer, workspace: Path) -> None:
    app, _ = make_app(server, workspace)
    app.is_demo = True
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert "offline demo" in str(app.query_one("#welcome").render())


async def test_a_session_shown_in_the_transcript_takes_the_welcomes_place(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert app.query("#welcome")
        # What showing a picked session does first (session_replay.show_session).
        app.query_one(Transcript).clear_view()
        await wait_until(pilot, lambda: not app.query("#welcome"), what="the welcome to go")


async def test_at_the_minimum_size_the_question_keeps_its_essentials(
    server: ScriptedServer, workspace: Path
) -> None:
    push_question(server)
    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(60, 16)) as pilot:
        question = await crowd(pilot)
        await wait_until(pilot, lambda: question.has_class("-compact"), what="the essentials")
        await pilot.pause()
        call = str(question.query_one("#approval-call").render())
        keys = str(question.query_one("#approval-keys").render())
        # The call on one line, its end elided; the key that answers it.
        assert call.startswith("? bash pytest") and call.endswith("…") and "\n" not in call
        assert keys.startswith("Ctrl+G to answer")
        assert app.query_one(Transcript).size.height >= 4
        # Ctrl+G still answers it.
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: question.has_focus, what="the question's focus")


async def test_a_question_with_a_diff_at_60x20_gives_way_and_keeps_the_input_on_screen(
    workspace: Path,
) -> None:
    """A question with a diff preview (the demo tour's write) at 60x20 gives way like a
    bash one: its preview hidden, the transcript keeps rows, the input stays on screen."""
    (workspace / "README.md").write_text("# Widgets\n\nA tokenizer for widgets.\n")
    app, _ = demo_app(workspace)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        await type_text(pilot, "explain the tokenizer")
        await pilot.press("enter")
        question = app.query_one(ApprovalQuestion)
        await wait_until(pilot, lambda: question.is_open, within=20, what="the write's question")
        await type_text(pilot, "keep the public API")
        await pilot.press("enter")
        await type_text(pilot, "then add a changelog entry")
        await pilot.press("alt+enter")
        await wait_until(pilot, lambda: app.query_one(QueueList).count == 2, what="2 queued")
        await type_text(pilot, "now stop")
        transcript = app.query_one(Transcript)
        await wait_until(pilot, lambda: question.has_class("-compact"), what="the essentials")
        await wait_until(pilot, lambda: transcript.size.height >= 4, what="the transcript's rows")
        assert not question.query_one("#approval-preview").display
        # The input and the bars are on the screen, not pushed below it.
        for widget in (app.query_one(PromptInput), app.query_one(StatusBar)):
            assert widget.region.bottom <= app.size.height, widget
        assert app.query_one(PromptInput).text == "now stop"
