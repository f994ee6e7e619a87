"""The input's cursor rests (stops blinking, stays shown) when left alone, and blinks
again at the next key; a blink someone else turned off is left off."""

from __future__ import annotations

import asyncio
import time

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import TextArea

from ink_tui.ui.widgets.cursor_rest import CursorRest


class Editor(TextArea):
    """As ink's input uses it: made on mount, woken by every key."""

    def on_mount(self) -> None:
        self.rest = CursorRest(self, rest_after=0.05)

    async def _on_key(self, event: events.Key) -> None:
        self.rest.wake()


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Editor()


async def _until(predicate: object, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_the_cursor_rests_when_left_alone_and_blinks_again_at_a_key() -> None:
    app = Host()
    async with app.run_test() as pilot:
        editor = app.query_one(Editor)
        editor.focus()
        await _until(lambda: not editor.cursor_blink)
        await pilot.pause()
        # Resting, the cursor is drawn steady: shown, its blink timer stopped.
        assert editor._cursor_visible
        editor.rest.rest_after = 600  # no rest again while the key is looked at
        await pilot.press("a")
        assert editor.cursor_blink
        editor.rest.rest_after = 0.05
        editor.rest.wake()
        await _until(lambda: not editor.cursor_blink)


async def test_a_blink_turned_off_by_someone_else_stays_off() -> None:
    app = Host()
    async with app.run_test() as pilot:
        editor = app.query_one(Editor)
        editor.cursor_blink = False
        editor.rest.wake()
        await pilot.press("a")
        assert not editor.cursor_blink
