"""An app's output kept as a terminal would get it, and a real emulator (pyte) reading it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pyte
import pytest
from rich.control import Control
from textual.app import App, ComposeResult
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from ink_tui.control.bus import EventBus
from ink_tui.fastpaths import scrollbar_rows
from ink_tui.ui.widgets.transcript import Transcript

Cell = tuple[str, str, str, bool, bool, bool, bool]


class CaptureDriver(HeadlessDriver):
    """A driver that writes like a terminal's, into a list."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written: list[str] = []

    @property
    def is_headless(self) -> bool:
        return False

    def write(self, data: str) -> None:
        self.written.append(data)


def screen_cells(screen: pyte.Screen) -> list[list[Cell]]:
    """Each cell's character, colours and attributes."""
    return [
        [
            (c.data, c.fg, c.bg, c.bold, c.italics, c.underscore, c.reverse)
            for c in (screen.buffer[y][x] for x in range(screen.columns))
        ]
        for y in range(screen.lines)
    ]


class Terminal:
    """pyte's screen, fed with what the app wrote since the last look."""

    def __init__(self, written: list[str], width: int, height: int) -> None:
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.Stream(self.screen)
        self.written = written
        self.read = 0

    def _catch_up(self) -> None:
        chunks = self.written[self.read :]
        self.read += len(chunks)
        for chunk in chunks:
            self.stream.feed(chunk)

    def rows(self) -> list[str]:
        self._catch_up()
        return [row.rstrip() for row in self.screen.display]

    def cells(self) -> list[list[Cell]]:
        self._catch_up()
        return screen_cells(self.screen)


class TranscriptHost(App[None]):
    """An app of a transcript alone, writing into a `CaptureDriver`."""

    def __init__(self) -> None:
        super().__init__(driver_class=CaptureDriver)
        self.bus = EventBus()

    def compose(self) -> ComposeResult:
        yield Transcript(self.bus)


def drawn_cells(app: App[Any]) -> list[list[Cell]]:
    """The compositor's whole picture, as a terminal that is given it shows it."""
    width, height = app.size
    screen = pyte.Screen(width, height)
    stream = pyte.Stream(screen)
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        stream.feed(Control.move_to(0, y).segment.text + strip.render(app.console))
    return screen_cells(screen)


async def shows_cells_drawn(pilot: Pilot[Any], terminal: Terminal, within: float = 10) -> None:
    """Wait for the terminal's cells to come to equal the compositor's picture."""
    deadline = time.monotonic() + within
    while True:
        await pilot.pause()
        expected, seen = drawn_cells(pilot.app), terminal.cells()
        if seen == expected:
            return
        if time.monotonic() > deadline:
            rows = [
                f"row {y}: " + ", ".join(f"{x}: {a} != {b}" for x, (a, b) in diffs[:3])
                for y in range(len(expected))
                if (
                    diffs := [
                        (x, p)
                        for x, p in enumerate(zip(expected[y], seen[y], strict=True))
                        if p[0] != p[1]
                    ]
                )
            ]
            raise AssertionError("cells unlike what was drawn:\n" + "\n".join(rows[:8]))
        await asyncio.sleep(0.02)


def scrollbar_asks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many of its rows the transcript's scrollbar handed the compositor, each time
    it was asked for whole with the terminal's content known (`scrollbar_rows`)."""
    asked: list[int] = []
    unlike_screen = scrollbar_rows._unlike_screen

    def recording(scrollbar: Any, regions: Any) -> list[int] | None:
        rows = unlike_screen(scrollbar, regions)
        if rows is not None:
            asked.append(len(rows))
        return rows

    monkeypatch.setattr(scrollbar_rows, "_unlike_screen", recording)
    return asked
