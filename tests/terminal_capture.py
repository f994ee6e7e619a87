"""An app's output kept as a terminal would get it, and a real emulator (pyte) reading it."""

from __future__ import annotations

from typing import Any

import pyte
from textual.drivers.headless_driver import HeadlessDriver

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
