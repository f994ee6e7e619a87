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

import pytest

from ink_tui import fastpaths
from ink_tui.fastpaths import terminal_scroll
from ink_tui.ui.widgets.transcript import Transcript
from tests.terminal_capture import (
    CaptureDriver,
    Terminal,
    TranscriptHost,
    scrollbar_asks,
    shows_cells_drawn,
)

WIDTH, HEIGHT = 60, 16
WORDS = "Each word of the streamed answer may wrap onto a new row of the transcript. "


class Host(TranscriptHost):
    pass


if fastpaths.enabled("terminal_scroll") or fastpaths.enabled("frame_diff"):
    terminal_scroll.install(Host, remember=fastpaths.enabled("frame_diff"))


async def test_after_each_scroll_the_bar_draws_only_the_rows_unlike_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = scrollbar_asks(monkeypatch)
    app = Host()
    async with app.run_test(headless=False, size=(WIDTH, HEIGHT)) as pilot:
        driver = app._driver
        assert isinstance(driver, CaptureDriver)
        terminal = Terminal(driver.written, WIDTH, HEIGHT)
        transcript = app.query_one(Transcript)
        for n in range(150):
            transcript.add_user(f"Question {n}")
        transcript.flush_now()
        await shows_cells_drawn(pilot, terminal)
        transcript.begin_answer()
        for word in (WORDS * 12).split(" "):
            transcript.append_answer(word + " ")
            transcript.flush_now()
            await shows_cells_drawn(pilot, terminal)
        transcript.end_answer()
        transcript.flush_now()
        await shows_cells_drawn(pilot, terminal)
        terminal_scroll.forget(app)
    if all(fastpaths.enabled(name) for name in ("terminal_scroll", "frame_diff", "scrollbar_rows")):
        assert len(asked) >= 10, asked
        # The thumb is a row or two: its edges and the row brought in, never the height.
        settled = asked[3:]
        assert max(settled) <= 3, asked
    else:
        assert asked == []
