"""The transcript's scrollbar after the terminal scrolls: only rows unlike the screen.

A scroll by the terminal moves the scrollbar's column with the rows, so the bar is asked
for whole after each; with the terminal's content followed (`frame_diff`), the bar hands
the compositor only the rows that differ from what the terminal shows there (the
thumb's edge and the row brought in), not its whole height. A long transcript (a small
thumb) streams a line at a time into a real emulator (pyte); at every step each cell,
colours too, must equal the compositor's own full picture: a bar row left out wrongly
stays stale and fails the test.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pyte
import pytest
from rich.control import Control
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from ink_tui import fastpaths
from ink_tui.control.bus import EventBus
from ink_tui.fastpaths import scrollbar_rows, terminal_scroll
from ink_tui.ui.widgets.transcript import Transcript
from tests.terminal_capture import CaptureDriver, Cell, Terminal, screen_cells

WIDTH, HEIGHT = 60, 16
WORDS = "Each word of the streamed answer may wrap onto a new row of the transcript. "


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__(driver_class=CaptureDriver)
        self.bus = EventBus()

    def compose(self) -> ComposeResult:
        yield Transcript(self.bus)


if fastpaths.enabled("terminal_scroll") or fastpaths.enabled("frame_diff"):
    terminal_scroll.install(Host, remember=fastpaths.enabled("frame_diff"))


def drawn(app: App[Any]) -> list[list[Cell]]:
    screen = pyte.Screen(WIDTH, HEIGHT)
    stream = pyte.Stream(screen)
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        stream.feed(Control.move_to(0, y).segment.text + strip.render(app.console))
    return screen_cells(screen)


async def shows_what_was_drawn(pilot: Pilot[None], terminal: Terminal, within: float = 10) -> None:
    deadline = time.monotonic() + within
    while True:
        await pilot.pause()
        expected, seen = drawn(pilot.app), terminal.cells()
        if seen == expected:
            return
        if time.monotonic() > deadline:
            rows = [y for y in range(HEIGHT) if expected[y] != seen[y]]
            raise AssertionError(f"rows {rows} unlike what was drawn")
        await asyncio.sleep(0.01)


def recorded_asks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    asked: list[int] = []
    unlike_screen = scrollbar_rows._unlike_screen

    def recording(scrollbar: Any, regions: Any) -> list[int] | None:
        rows = unlike_screen(scrollbar, regions)
        if rows is not None:
            asked.append(len(rows))
        return rows

    monkeypatch.setattr(scrollbar_rows, "_unlike_screen", recording)
    return asked


async def test_after_each_scroll_the_bar_draws_only_the_rows_unlike_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = recorded_asks(monkeypatch)
    app = Host()
    async with app.run_test(headless=False, size=(WIDTH, HEIGHT)) as pilot:
        driver = app._driver
        assert isinstance(driver, CaptureDriver)
        terminal = Terminal(driver.written, WIDTH, HEIGHT)
        transcript = app.query_one(Transcript)
        for n in range(150):
            transcript.add_user(f"Question {n}")
        transcript.flush_now()
        await shows_what_was_drawn(pilot, terminal)
        transcript.begin_answer()
        for word in (WORDS * 12).split(" "):
            transcript.append_answer(word + " ")
            transcript.flush_now()
            await shows_what_was_drawn(pilot, terminal)
        transcript.end_answer()
        transcript.flush_now()
        await shows_what_was_drawn(pilot, terminal)
        terminal_scroll.forget(app)
    if all(fastpaths.enabled(name) for name in ("terminal_scroll", "frame_diff", "scrollbar_rows")):
        assert len(asked) >= 10, asked
        # The thumb is a row or two: its edges and the row brought in, never the height.
        settled = asked[3:]
        assert max(settled) <= 3, asked
    else:
        assert asked == []
