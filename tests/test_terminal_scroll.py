"""What the terminal shows is what the app drew, while only changed rows are written.

The app runs on a driver that keeps everything it writes; a real terminal emulator
(pyte) reads it. After each step the emulator's cells (colours too) must come to equal
the app's own picture of the screen (the compositor's full render): a row the
transcript failed to draw again, or a scroll the terminal did wrong, never heals and
fails the test. With the fast path on, lines that scroll are moved by the terminal (a
scroll region), and a growing line is written from where it changed, not whole.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from textual.pilot import Pilot

from ink_tui import fastpaths
from ink_tui.fastpaths import terminal_scroll
from ink_tui.ui.widgets.transcript import Transcript
from tests.terminal_capture import CaptureDriver, Terminal, TranscriptHost, shows_cells_drawn

WIDTH, HEIGHT = 60, 12
SCROLL_REGION = re.compile(r"\x1b\[\d+;\d+r")  # DECSTBM: a scroll region is set

PARAGRAPH = (
    "Streaming text wraps onto new lines, and every new line moves the rows above it "
    "up by one. The terminal can do that itself; only the new row is drawn. "
)
ANSWER = (
    PARAGRAPH * 3
    + "\n\n- a list item that is long enough to wrap at sixty columns, and then some\n"
    + "- another item\n\n```python\nfor n in range(3):\n    print(n)\n```\n\n"
    + PARAGRAPH * 2
)


class Host(TranscriptHost):
    pass


if fastpaths.enabled("terminal_scroll"):
    terminal_scroll.install(Host)


@asynccontextmanager
async def running() -> AsyncIterator[tuple[Pilot[None], Transcript, Terminal]]:
    app = Host()
    async with app.run_test(headless=False, size=(WIDTH, HEIGHT)) as pilot:
        driver = app._driver
        assert isinstance(driver, CaptureDriver)
        terminal = Terminal(driver.written, WIDTH, HEIGHT)
        yield pilot, app.query_one(Transcript), terminal
        terminal_scroll.forget(app)


def _writes_since(terminal: Terminal, mark: int) -> str:
    return "".join(terminal.written[mark:])


async def stream(
    pilot: Pilot[None],
    transcript: Transcript,
    terminal: Terminal,
    text: str,
    each: Callable[[], None] = lambda: None,
) -> None:
    transcript.begin_answer()
    for start in range(0, len(text), 7):
        transcript.append_answer(text[start : start + 7])
        transcript.flush_now()
        each()
        await shows_cells_drawn(pilot, terminal)
    transcript.end_answer()
    transcript.flush_now()
    await shows_cells_drawn(pilot, terminal)


async def test_a_streamed_answer_reaches_the_terminal_as_drawn() -> None:
    async with running() as (pilot, transcript, terminal):
        for n in range(3):
            transcript.add_user(f"Question {n}")
        await shows_cells_drawn(pilot, terminal)
        mark = len(terminal.written)
        await stream(pilot, transcript, terminal, ANSWER)
        written = _writes_since(terminal, mark)
        assert "print(n)" in "\n".join(terminal.rows()) or "sixty" in "\n".join(terminal.rows())
        if fastpaths.enabled("terminal_scroll"):
            # The answer's lines came in by the terminal's scrolling.
            assert len(SCROLL_REGION.findall(written)) >= 10
        else:
            assert not SCROLL_REGION.search(written)


async def test_a_growing_line_is_written_from_where_it_changed() -> None:
    async with running() as (pilot, transcript, terminal):
        transcript.add_user("Question")
        transcript.begin_answer()
        transcript.append_answer("A line that grows ")
        transcript.flush_now()
        await shows_cells_drawn(pilot, terminal)
        sizes = []
        for word in ("slowly ", "word ", "by ", "word."):
            mark = len(terminal.written)
            transcript.append_answer(word)
            transcript.flush_now()
            await shows_cells_drawn(pilot, terminal)
            sizes.append(len(_writes_since(terminal, mark)))
        # The whole row with its styles is well over 100 bytes; the new word and the
        # cursor's moves and colours around it are not (Textual alone writes it whole).
        if fastpaths.enabled("terminal_scroll"):
            assert max(sizes) < 100, sizes
        else:
            assert min(sizes) > 100, sizes


async def test_something_drawn_over_the_transcript_keeps_the_rows_right() -> None:
    async with running() as (pilot, transcript, terminal):
        # A toast over the transcript's rows: the terminal must not move it with them.
        pilot.app.notify("A toast over the rows", timeout=60)
        await shows_cells_drawn(pilot, terminal)
        await stream(pilot, transcript, terminal, PARAGRAPH * 3)


async def test_scrolled_back_the_rows_stay_and_are_drawn_right() -> None:
    async with running() as (pilot, transcript, terminal):
        for n in range(20):
            transcript.add_user(f"Question {n}")
        transcript.flush_now()
        await shows_cells_drawn(pilot, terminal)
        transcript.scroll_to(y=2, animate=False, immediate=True)
        await shows_cells_drawn(pilot, terminal)
        assert not transcript.following
        mark = len(terminal.written)
        await stream(pilot, transcript, terminal, PARAGRAPH * 2)
        assert not SCROLL_REGION.search(_writes_since(terminal, mark))
        transcript.follow()
        await shows_cells_drawn(pilot, terminal)
        assert "Streaming" in "\n".join(terminal.rows()) or "drawn" in "\n".join(terminal.rows())
