"""The activity panel draws only the rows whose text changed.

It paints ten times a second while a run works; a paint that changes one row (a call
got its slot) draws that row alone, a paint that changes nothing draws nothing, and a
change in the number of rows lays the panel out again with every row drawn. What is
drawn is what the panel says (`content`), cut to the width with an ellipsis.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.strip import Strip

from ink_tui.control.bus import EventBus
from ink_tui.core.events import RunStart, ToolRunning, ToolStart, TurnStart
from ink_tui.core.messages import ToolCall
from ink_tui.ui.widgets.activity_panel import ActivityPanel
from tests.test_provider_waiting_panel import PanelApp, frozen  # noqa: F401 (a fixture)

# Spinners and counts stand still: only what the events change changes.
pytestmark = pytest.mark.usefixtures("frozen")


def start(bus: EventBus, n: int) -> None:
    call = ToolCall(f"call_{n}", "bash", {"command": f"sleep {n}"})
    bus.publish(ToolStart(call=call, concurrent=True))


async def drawn_rows(pilot: Pilot[None], panel: ActivityPanel, drawn: list[int]) -> list[int]:
    drawn.clear()
    panel._paint()
    await pilot.pause()
    return sorted(set(drawn))


def row_text(strip: Strip) -> str:
    return "".join(segment.text for segment in strip)


async def test_a_paint_draws_only_the_rows_that_changed() -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(80, 20)) as pilot:
        panel = app.query_one(ActivityPanel)
        drawn: list[int] = []
        real_render_line = panel.render_line

        def render_line(y: int) -> Strip:
            drawn.append(y)
            return real_render_line(y)

        panel.render_line = render_line  # type: ignore[method-assign]
        bus.publish(RunStart())
        bus.publish(TurnStart(turn=1))
        for n in (1, 2, 3):
            start(bus, n)
        await pilot.pause()
        # Four rows (the phase, three queued calls) laid out: each drawn.
        assert sorted(set(drawn)) == [0, 1, 2, 3]
        assert await drawn_rows(pilot, panel, drawn) == []
        bus.publish(ToolRunning(call_id="call_2"))
        assert await drawn_rows(pilot, panel, drawn) == [2]
        shown = str(panel.content).splitlines()
        assert [row_text(real_render_line(y)).rstrip() for y in range(4)] == [
            line.rstrip() for line in shown
        ]
        # A call more: a row more, the panel laid out again.
        start(bus, 4)
        assert await drawn_rows(pilot, panel, drawn) == [0, 1, 2, 3, 4]


async def test_a_row_wider_than_the_panel_ends_in_an_ellipsis() -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.query_one(ActivityPanel)
        bus.publish(RunStart())
        call = ToolCall("call_1", "bash", {"command": "echo " + "word " * 30})
        bus.publish(ToolStart(call=call))
        panel._paint()
        await pilot.pause()
        width = panel.size.width
        row = panel.render_line(1)
        assert row.cell_length == width
        assert row_text(row).rstrip().endswith("…")
