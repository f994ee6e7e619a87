from __future__ import annotations

import time
from typing import ClassVar

import pytest
from textual import constants, events
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual._xterm_parser import XTermParser
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.pilot import Pilot

from ink_tui.fastpaths.textual_keys import (
    ALT_ENTER_SEQUENCE,
    alt_enter_installed,
    install_alt_enter,
)
from ink_tui.ui.input_history import InputHistory
from ink_tui.ui.widgets.prompt_input import MAX_VISIBLE_ROWS, PromptInput


class Host(App[None]):
    """A stand-in for the real App: one PromptInput, Ctrl+C bound as the App binds it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Interrupt", priority=True),
    ]

    def __init__(self, history: InputHistory | None = None) -> None:
        super().__init__()
        self.history = history
        self.received: list[Message] = []
        self.interrupts: list[bool] = []

    def compose(self) -> ComposeResult:
        yield PromptInput(input_history=self.history, placeholder="Ask anything")

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.received.append(message)

    def on_prompt_input_quit_requested(self, message: PromptInput.QuitRequested) -> None:
        self.received.append(message)

    def on_prompt_input_pull_queue(self, message: PromptInput.PullQueue) -> None:
        self.received.append(message)

    def action_interrupt(self) -> None:
        self.interrupts.append(self.prompt.clear_input())

    def submitted(self) -> list[tuple[str, str]]:
        return [(m.text, m.mode) for m in self.received if isinstance(m, PromptInput.Submitted)]


class NonPriorityHost(Host):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+c", "interrupt", "Interrupt")]


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*["enter" if char == "\n" else char for char in text])


async def post_terminal_input(pilot: Pilot[None], data: str) -> list[str]:
    """Deliver raw terminal bytes as the driver does: parse them, then post each event
    to the App (`Driver.process_message` sets the sender and posts to the App)."""
    parsed = list(XTermParser().feed(data))
    for event in parsed:
        event.set_sender(pilot.app)
        pilot.app.post_message(event)
    await pilot.pause()
    return [event.key for event in parsed if isinstance(event, events.Key)]


# -- the terminal parser -------------------------------------------------------------


def test_parser_reports_esc_cr_as_alt_enter() -> None:
    install_alt_enter()
    install_alt_enter()  # idempotent
    assert alt_enter_installed()
    keys = [event.key for event in XTermParser().feed(ALT_ENTER_SEQUENCE)]
    assert keys == ["alt+enter"]
    assert [event.key for event in XTermParser().feed("\r")] == ["enter"]


def test_without_the_entry_esc_cr_is_plain_enter(monkeypatch: pytest.MonkeyPatch) -> None:
    # The problem install_alt_enter solves: the sequence waits out the escape delay and
    # is replayed as an Enter that cannot be told from a plain one.
    monkeypatch.delitem(ANSI_SEQUENCES_KEYS, ALT_ENTER_SEQUENCE, raising=False)  # type: ignore[arg-type]
    parser = XTermParser()
    assert list(parser.feed(ALT_ENTER_SEQUENCE)) == []
    time.sleep(constants.ESCAPE_DELAY + 0.05)
    assert [event.key for event in parser.tick() if isinstance(event, events.Key)] == ["enter"]


# -- sending ---------------------------------------------------------------------------


async def test_enter_submits_a_steer_and_clears() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "fix the bug")
        await pilot.press("enter")
        assert app.submitted() == [("fix the bug", "steer")]
        assert app.prompt.text == ""


async def test_blank_enter_does_nothing() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("enter")
        await type_text(pilot, "  ")
        await pilot.press("enter")
        assert app.submitted() == []
        # Not even a newline was inserted, and the blanks stay as typed.
        assert app.prompt.text == "  "


async def test_alt_enter_from_kitty_protocol_submits_a_follow_up() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "then add tests")
        await pilot.press("alt+enter")
        assert app.submitted() == [("then add tests", "follow_up")]
        assert app.prompt.text == ""


async def test_alt_enter_as_esc_cr_submits_a_follow_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # Start without the entry: mounting the widget must install it.
    monkeypatch.delitem(ANSI_SEQUENCES_KEYS, ALT_ENTER_SEQUENCE, raising=False)  # type: ignore[arg-type]
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "then add tests")
        keys = await post_terminal_input(pilot, ALT_ENTER_SEQUENCE)
        assert keys == ["alt+enter"]
        assert app.submitted() == [("then add tests", "follow_up")]
        assert app.prompt.text == ""
        # A plain CR from the same path is still a steer.
        await type_text(pilot, "now")
        assert await post_terminal_input(pilot, "\r") == ["enter"]
        assert app.submitted()[-1] == ("now", "steer")


async def test_shift_enter_and_ctrl_j_insert_newlines() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "one")
        await pilot.press("shift+enter")
        await type_text(pilot, "two")
        # Ctrl+J as the terminal sends it: a bare LF.
        assert await post_terminal_input(pilot, "\n") == ["ctrl+j"]
        await type_text(pilot, "three")
        assert app.submitted() == []
        assert app.prompt.text == "one\ntwo\nthree"
        await pilot.press("enter")
        assert app.submitted() == [("one\ntwo\nthree", "steer")]


async def test_ctrl_j_then_enter_submits_two_lines() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "a")
        await pilot.press("ctrl+j")
        await type_text(pilot, "b")
        await pilot.press("enter")
        assert app.submitted() == [("a\nb", "steer")]


async def test_paste_of_three_lines_is_inserted_then_enter_sends_all() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.post_message(events.Paste("line one\nline two\nline three"))
        await pilot.pause()
        assert app.submitted() == []
        assert app.prompt.text == "line one\nline two\nline three"
        await pilot.press("enter")
        assert app.submitted() == [("line one\nline two\nline three", "steer")]


async def test_grows_with_its_content_up_to_the_limit() -> None:
    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        border = 2
        assert app.prompt.outer_size.height == 1 + border
        app.prompt.load_text("1\n2\n3")
        await pilot.pause()
        assert app.prompt.outer_size.height == 3 + border
        app.prompt.load_text("\n".join(str(n) for n in range(20)))
        await pilot.pause()
        assert app.prompt.outer_size.height == MAX_VISIBLE_ROWS + border


# -- history -----------------------------------------------------------------------------


async def test_up_and_down_walk_the_history_and_keep_the_draft() -> None:
    app = Host(InputHistory(["older", "two\nlines"]))
    async with app.run_test() as pilot:
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.prompt.text == "two\nlines"
        assert app.prompt.cursor_location == (0, 3)  # first row: Up walks on
        await pilot.press("up")
        assert app.prompt.text == "older"
        await pilot.press("up")  # nothing older
        assert app.prompt.text == "older"
        await pilot.press("down")
        assert app.prompt.text == "two\nlines"
        assert app.prompt.cursor_location == (1, 5)  # last row: Down walks on
        await pilot.press("down")
        assert app.prompt.text == "draft"
        await pilot.press("down")  # past the draft: an ordinary cursor move
        assert app.prompt.text == "draft"


async def test_submitted_text_goes_into_the_history() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "first")
        await pilot.press("enter")
        await type_text(pilot, "second")
        await pilot.press("alt+enter")
        assert app.prompt.input_history.entries == ["first", "second"]
        await pilot.press("up", "up")
        assert app.prompt.text == "first"


async def test_up_and_down_inside_a_multi_line_text_move_the_cursor() -> None:
    app = Host(InputHistory(["from history"]))
    async with app.run_test() as pilot:
        app.prompt.load_text("one\ntwo\nthree")
        app.prompt.move_cursor((1, 1))
        await pilot.press("up")
        assert app.prompt.text == "one\ntwo\nthree"
        assert app.prompt.cursor_location == (0, 1)
        await pilot.press("down", "down")
        assert app.prompt.text == "one\ntwo\nthree"
        assert app.prompt.cursor_location == (2, 1)


async def test_up_inside_a_wrapped_line_moves_the_cursor() -> None:
    app = Host(InputHistory(["from history"]))
    async with app.run_test(size=(24, 12)) as pilot:
        long_line = "word " * 12
        app.prompt.load_text(long_line)
        app.prompt.move_cursor((0, len(long_line)))
        await pilot.pause()
        await pilot.press("up")
        assert app.prompt.text == long_line
        assert app.prompt.cursor_location[1] < len(long_line)


async def test_an_edited_history_entry_is_not_lost_by_walking_on() -> None:
    app = Host(InputHistory(["older", "newer"]))
    async with app.run_test() as pilot:
        await pilot.press("up", "up")
        assert app.prompt.text == "older"
        await type_text(pilot, "!")
        await pilot.press("up")  # the edit becomes the draft; the walk starts over
        assert app.prompt.text == "newer"
        await pilot.press("down")
        assert app.prompt.text == "older!"


# -- restore, clear, quit, pull ------------------------------------------------------------


async def test_restore_puts_queued_input_above_the_draft() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "my draft")
        app.prompt.restore("queued one\n\nqueued two")
        await pilot.pause()
        assert app.prompt.text == "queued one\n\nqueued two\n\nmy draft"
        assert app.prompt.cursor_location == (2, len("queued two"))


async def test_restore_into_an_empty_box() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "  ")  # blank draft: replaced, not kept
        app.prompt.restore("queued")
        await pilot.pause()
        assert app.prompt.text == "queued"
        assert app.prompt.cursor_location == (0, len("queued"))


async def test_ctrl_d_on_empty_box_requests_quit_else_deletes_forward() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "abc")
        app.prompt.move_cursor((0, 0))
        await pilot.press("ctrl+d")
        assert app.prompt.text == "bc"
        assert app.received == []
        app.prompt.load_text("")
        await pilot.press("ctrl+d")
        assert [type(m) for m in app.received] == [PromptInput.QuitRequested]


async def test_alt_up_posts_pull_queue() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "draft")
        await pilot.press("alt+up")
        assert [type(m) for m in app.received] == [PromptInput.PullQueue]
        assert app.prompt.text == "draft"


async def test_priority_ctrl_c_of_the_app_wins_over_textarea_copy() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "some text")
        # With a selection TextArea's own ctrl+c (copy) would act if it saw the key.
        app.prompt.select_all()
        assert app.focused is app.prompt
        await pilot.press("ctrl+c")
        assert app.interrupts == [True]
        assert app.prompt.text == ""
        await pilot.press("ctrl+c")
        assert app.interrupts == [True, False]


async def test_without_priority_textarea_copy_swallows_ctrl_c() -> None:
    # Why the App must bind Ctrl+C with priority=True.
    app = NonPriorityHost()
    async with app.run_test() as pilot:
        await type_text(pilot, "some text")
        app.prompt.select_all()
        await pilot.press("ctrl+c")
        assert app.interrupts == []
        assert app.prompt.text == "some text"


async def test_clear_input_reports_whether_there_was_text() -> None:
    app = Host()
    async with app.run_test() as pilot:
        assert app.prompt.clear_input() is False
        await type_text(pilot, "x")
        assert app.prompt.clear_input() is True
        assert app.prompt.text == ""
