from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import ClassVar

from rich.console import Console
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Label, Static

from ink_tui.session.summary import SessionSummary
from ink_tui.ui.screens.help_screen import KEYS, HelpScreen
from ink_tui.ui.screens.list_picker import ListPicker, PickerRow, filter_rows
from ink_tui.ui.screens.session_picker import SessionPicker, first_line, session_row
from ink_tui.ui.slash_commands import COMMANDS

NO_RESULT = object()

MODELS: list[PickerRow] = [
    ("gpt-4o", "gpt-4o", "api.openai.com"),
    ("sonnet", "claude-sonnet", "api.anthropic.com"),
    ("local", "qwen2.5-coder", "localhost:11434"),
]


class Host(App[None]):
    """Pushes a screen and records what it dismisses with; Escape bound as in InkApp."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "escape", "Escape")]

    def __init__(self) -> None:
        super().__init__()
        self.result: object = NO_RESULT
        self.escapes = 0

    def compose(self) -> ComposeResult:
        yield Label("main screen")

    def open(self, screen: Screen[str | None] | Screen[None]) -> None:
        def record(result: object) -> None:
            self.result = result

        self.push_screen(screen, record)  # type: ignore[arg-type]

    def action_escape(self) -> None:
        self.escapes += 1


# -- ListPicker ------------------------------------------------------------------------


def test_filter_rows_needs_every_word_in_label_or_detail() -> None:
    assert filter_rows(MODELS, "") == MODELS
    assert [row[0] for row in filter_rows(MODELS, "API")] == ["gpt-4o", "sonnet"]
    assert [row[0] for row in filter_rows(MODELS, "claude anthropic")] == ["sonnet"]
    assert filter_rows(MODELS, "claude openai") == []


async def test_enter_picks_the_highlighted_row() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.open(ListPicker("Model", MODELS))
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ListPicker)
        assert picker.focused is picker.query_one(Input)
        assert picker.highlighted_key == "gpt-4o"
        await pilot.press("down", "down", "down")  # stops at the last row
        assert picker.highlighted_key == "local"
        await pilot.press("up", "enter")
        assert app.result == "sonnet"
        assert not isinstance(app.screen, ListPicker)


async def test_the_selected_key_is_highlighted_first() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.open(ListPicker("Model", MODELS, selected_key="local"))
        await pilot.pause()
        await pilot.press("enter")
        assert app.result == "local"


async def test_typing_filters_and_enter_picks_from_what_is_left() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.open(ListPicker("Model", MODELS))
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ListPicker)
        await pilot.press(*"qwen")
        assert [row[0] for row in picker.visible_rows] == ["local"]
        assert picker.highlighted_key == "local"
        await pilot.press("enter")
        assert app.result == "local"


async def test_no_match_shows_a_notice_and_enter_does_nothing() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.open(ListPicker("Model", MODELS))
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, ListPicker)
        await pilot.press(*"zzz")
        assert picker.visible_rows == []
        assert picker.query_one("#picker-empty").display
        await pilot.press("enter")
        assert app.result is NO_RESULT
        assert isinstance(app.screen, ListPicker)  # still open
        await pilot.press("backspace", "backspace", "backspace")
        assert len(picker.visible_rows) == 3


async def test_escape_cancels_with_none_and_not_the_apps_escape() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.open(ListPicker("Model", MODELS))
        await pilot.pause()
        await pilot.press("escape")
        assert app.result is None
        assert app.escapes == 0
        assert not isinstance(app.screen, ListPicker)


async def test_a_click_picks_a_row() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        app.open(ListPicker("Model", MODELS))
        await pilot.pause()
        await pilot.click("#picker-rows", offset=(2, 2))  # the third row
        assert app.result == "local"


# -- SessionPicker ---------------------------------------------------------------------


def summary(
    session_id: str, prompt: str, count: int, model: str, started: dt.datetime
) -> SessionSummary:
    return SessionSummary(
        id=session_id,
        path=Path(f"/sessions/{session_id}.jsonl"),
        started=started,
        first_prompt=prompt,
        message_count=count,
        model=model,
    )


UTC_START = dt.datetime(2025, 3, 14, 9, 26, tzinfo=dt.UTC)
SESSIONS = [
    summary("s1", "fix the failing parser test\nit fails on CRLF", 12, "gpt-4o", UTC_START),
    summary("s2", "x" * 100, 1, "qwen2.5-coder", UTC_START + dt.timedelta(days=1)),
    summary("s3", "\n\n", 0, "", UTC_START + dt.timedelta(days=2)),
]


def test_session_rows_show_local_time_first_line_count_and_model() -> None:
    local = UTC_START.astimezone().strftime("%Y-%m-%d %H:%M")
    assert session_row(SESSIONS[0]) == (
        "s1",
        f"{local}  fix the failing parser test",
        "12 messages · gpt-4o",
    )
    _, label, detail = session_row(SESSIONS[1])
    assert label.endswith("x…")
    assert len(label.split("  ", 1)[1]) == 60
    assert detail == "1 message · qwen2.5-coder"
    assert session_row(SESSIONS[2])[1:] == (
        f"{(UTC_START + dt.timedelta(days=2)).astimezone():%Y-%m-%d %H:%M}  (no prompt)",
        "0 messages",
    )


def test_first_line_skips_blank_lines_and_cuts() -> None:
    assert first_line("\n  hello  \nworld") == "hello"
    assert first_line("abcdef", width=4) == "abc…"
    assert first_line("") == "(no prompt)"


async def test_session_picker_returns_the_session_id() -> None:
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        app.open(SessionPicker(SESSIONS))
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        assert [row[0] for row in picker.visible_rows] == ["s1", "s2", "s3"]
        await pilot.press(*"qwen")
        assert [row[0] for row in picker.visible_rows] == ["s2"]
        await pilot.press("enter")
        assert app.result == "s2"


# -- HelpScreen ------------------------------------------------------------------------


def plain(renderable: object) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


async def test_help_lists_keys_and_commands_and_escape_closes() -> None:
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        app.open(HelpScreen(keys=[("Ctrl+X", "do the thing")]))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        keys = plain(screen.query_one("#help-keys", Static).content)
        assert "Ctrl+X" in keys and "do the thing" in keys
        commands = plain(screen.query_one("#help-commands", Static).content)
        for command in COMMANDS:
            assert command.usage in commands
            assert command.summary in commands
        await pilot.press("escape")
        assert app.result is None
        assert app.escapes == 0
        assert not isinstance(app.screen, HelpScreen)


def test_the_default_keys_cover_the_new_entry_points() -> None:
    names = [key for key, _ in KEYS]
    for key in ("Ctrl+P", "/", "@", "Escape"):
        assert key in names


async def test_help_scrolls_when_it_does_not_fit() -> None:
    app = Host()
    async with app.run_test(size=(80, 14)) as pilot:
        app.open(HelpScreen())
        await pilot.pause()
        body = app.screen.query_one("#help-body")
        assert body.max_scroll_y > 0
        await pilot.press("end")
        assert body.scroll_y == body.max_scroll_y
