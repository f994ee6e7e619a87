"""The TUI's activity panel says when the model server has gone quiet, and stops saying it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from textual.app import App, ComposeResult

from ink_tui.control.bus import EventBus
from ink_tui.core.events import (
    Notice,
    RunEnd,
    RunStart,
    ServerWaiting,
    TextDelta,
    TurnStart,
)
from ink_tui.ui import clock
from ink_tui.ui.widgets.activity_panel import ActivityPanel


class PanelApp(App[None]):
    def __init__(self, bus: EventBus) -> None:
        super().__init__()
        self.bus = bus

    def compose(self) -> ComposeResult:
        yield ActivityPanel(self.bus)


@pytest.fixture
def frozen() -> Iterator[None]:
    clock.freeze(100.0)
    try:
        yield
    finally:
        clock.freeze(None)


def shown(app: PanelApp) -> str:
    panel = app.query_one(ActivityPanel)
    panel._paint()  # what the ticker would draw next
    return str(panel.render())


async def test_a_silent_server_is_shown_with_its_seconds_counting(frozen: None) -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test():
        bus.publish(RunStart())
        bus.publish(TurnStart(turn=1))
        assert "waiting for the model" in shown(app)
        bus.publish(ServerWaiting(seconds=3.2, limit_s=120))
        assert "waiting for the server (3 s) · gives up at 120 s" in shown(app)
        # Later reports of the same silence change nothing; the clock moves the count.
        clock.freeze(110.0)
        bus.publish(ServerWaiting(seconds=13.2, limit_s=120))
        assert "waiting for the server (13 s)" in shown(app)
        bus.publish(ServerWaiting(seconds=0, limit_s=0, over=True))
        assert "waiting for the server" not in shown(app)
        assert "waiting for the model" in shown(app)


@pytest.mark.parametrize(
    "ends_it",
    [
        TextDelta(text="at last"),
        Notice(text="retrying", kind="retry", data={"delay": 1.0}),
        TurnStart(turn=2),
        RunEnd(stop_reason=None, error="gave up"),
    ],
    ids=["text", "retry", "next-turn", "run-end"],
)
async def test_what_follows_a_silence_ends_the_waiting_line(
    frozen: None, ends_it: TextDelta | Notice | TurnStart | RunEnd
) -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test():
        bus.publish(RunStart())
        bus.publish(TurnStart(turn=1))
        bus.publish(TextDelta(text="Half"))
        bus.publish(ServerWaiting(seconds=4, limit_s=60))
        assert "waiting for the server (4 s)" in shown(app)
        bus.publish(ends_it)
        assert "waiting for the server" not in shown(app)
