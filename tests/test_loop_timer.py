"""`LoopTimer`: one pending run at a time (starting again moves it), cancel stops it,
nothing runs for a widget no longer attached, and an error in the callback reaches
Textual as an error in the widget's own handler would (the app stops with it)."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from ink_tui.ui.loop_timer import LoopTimer

WITHIN = 30.0


class OneWidget(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("x")


class Calls(list[str]):
    """What ran, in order; `wait` for the next one."""

    def __init__(self) -> None:
        super().__init__()
        self._came = asyncio.Queue[None]()

    def __call__(self, name: str) -> None:
        self.append(name)
        self._came.put_nowait(None)

    async def wait(self) -> None:
        await asyncio.wait_for(self._came.get(), WITHIN)


async def test_starting_again_moves_the_run_and_cancel_stops_it() -> None:
    app = OneWidget()
    async with app.run_test():
        calls = Calls()
        timer = LoopTimer(app.query_one(Static), lambda: calls("ran"))
        timer.start(WITHIN)
        assert timer.armed
        timer.start(0)  # moved: runs now, once
        await calls.wait()
        assert not timer.armed
        timer.start(0)
        timer.cancel()
        assert not timer.armed
        LoopTimer(app.screen, lambda: calls("witness")).start(0.05)
        await calls.wait()
        assert calls == ["ran", "witness"]


async def test_nothing_runs_for_a_removed_widget() -> None:
    app = OneWidget()
    async with app.run_test() as pilot:
        calls = Calls()
        widget = app.query_one(Static)
        LoopTimer(widget, lambda: calls("removed")).start(0.01)
        await widget.remove()
        LoopTimer(app.screen, lambda: calls("witness")).start(0.05)
        await calls.wait()
        await pilot.pause()
        assert calls == ["witness"]


async def test_an_error_in_the_callback_stops_the_app_as_a_handler_error_would() -> None:
    def broken() -> None:
        raise RuntimeError("frame failed")

    app = OneWidget()
    with pytest.raises(RuntimeError, match="frame failed"):
        async with app.run_test() as pilot:
            LoopTimer(app.query_one(Static), broken).start(0)
            async with asyncio.timeout(WITHIN):
                while app.is_running:
                    await pilot.pause(0.01)
    assert app.return_code == 1
