"""The activity panel's sub-agent rows as drawn, from bus events alone: a task call's row
is its sub-agent's; the stop and steer parts always show and post their requests; a
short terminal gets one line that counts them; a question from one shows on its row."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from textual import on
from textual.app import App, ComposeResult
from textual.message import Message

from ink_tui.control.bus import EventBus
from ink_tui.core.events import (
    ApprovalRequest,
    ApprovalResolved,
    Event,
    MessageEnd,
    RunStart,
    SubagentEnd,
    SubagentStart,
    ToolEnd,
    ToolRunning,
    ToolStart,
    TurnStart,
)
from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage
from ink_tui.core.tool_api import ToolResult
from ink_tui.ui import clock
from ink_tui.ui.agent_requests import SteerAgentRequested, StopAgentRequested
from ink_tui.ui.fit_text import ELLIPSIS
from ink_tui.ui.widgets.activity_panel import (
    STEER_LABEL,
    STOP_LABEL,
    WAITING_FOR_ANSWER,
    ActivityPanel,
)

CONTROLS = f"{STOP_LABEL}  {STEER_LABEL}"


class PanelApp(App[None]):
    def __init__(self, bus: EventBus) -> None:
        super().__init__()
        self.bus = bus
        self.requests: list[Message] = []

    def compose(self) -> ComposeResult:
        yield ActivityPanel(self.bus)

    @on(StopAgentRequested)
    @on(SteerAgentRequested)
    def _asked(self, message: Message) -> None:
        self.requests.append(message)


@pytest.fixture
def frozen() -> Iterator[None]:
    clock.freeze(100.0)
    try:
        yield
    finally:
        clock.freeze(None)


def lines(app: PanelApp) -> list[str]:
    panel = app.query_one(ActivityPanel)
    panel._paint()
    return str(panel.content).splitlines()


def mark(event: Event, agent_id: str, call_id: str) -> Event:
    event.agent_id, event.parent_call_id = agent_id, call_id
    return event


def start_task(bus: EventBus, n: int, description: str) -> None:
    """The parent's task call `call_<n>`, and its sub-agent `agent-<n>` started."""
    call = ToolCall(f"call_{n}", "task", {"description": description, "prompt": "p"})
    bus.publish(ToolStart(call=call, concurrent=True))
    bus.publish(ToolRunning(call_id=call.id))
    bus.publish(mark(SubagentStart(description=description, prompt="p"), f"agent-{n}", call.id))


def end_task(bus: EventBus, n: int) -> None:
    bus.publish(mark(SubagentEnd(stop_reason="completed", result="ok"), f"agent-{n}", f"call_{n}"))
    call = ToolCall(f"call_{n}", "task", {})
    message = ToolResultMessage(call_id=call.id, tool_name="task", content="ok")
    bus.publish(ToolEnd(call=call, result=ToolResult("ok"), duration_s=1.0, message=message))


async def test_a_task_rows_is_its_sub_agents_with_its_state_then_goes(frozen: None) -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(100, 12)):
        bus.publish(RunStart())
        bus.publish(ToolStart(call=ToolCall("call_r", "read", {"path": "a.py"}), concurrent=True))
        start_task(bus, 1, "scan the tests")
        bus.publish(mark(TurnStart(turn=1), "agent-1", "call_1"))
        usage = Usage(input_tokens=1200, output_tokens=34)
        reply = AssistantMessage(text="", usage=usage)
        bus.publish(mark(MessageEnd(message=reply), "agent-1", "call_1"))
        clock.freeze(112.0)
        drawn = lines(app)
        assert len(drawn) == 3  # the phase, the read, the sub-agent (not its task call)
        assert "read a.py" in drawn[1]
        assert drawn[2] == f"  ⠋ scan the tests · thinking · 12s · 1.2k tokens  {CONTROLS}"
        end_task(bus, 1)
        assert not [line for line in lines(app) if "scan" in line or "task" in line]


async def test_the_controls_always_show_and_the_description_gives_way(frozen: None) -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(48, 12)) as pilot:
        bus.publish(RunStart())
        start_task(bus, 1, "read every module and report on its public functions")
        await pilot.pause()
        (row,) = lines(app)[1:]
        assert row.endswith(CONTROLS) and len(row) <= 46
        assert ELLIPSIS in row and "read every" in row
        # Each part posts its request for that sub-agent, named by its description.
        panel = app.query_one(ActivityPanel)
        for label, kind in ((STOP_LABEL, StopAgentRequested), (STEER_LABEL, SteerAgentRequested)):
            assert await pilot.click(ActivityPanel, offset=(1 + row.index(label) + 1, 2))
            await pilot.pause()
            request = app.requests[-1]
            assert isinstance(request, kind) and request.agent_id == "agent-1"
            assert request.description.startswith("read every module")
        assert len(app.requests) == 2 and panel.has_class("-active")


async def test_a_short_terminal_gets_one_line_that_counts_them(frozen: None) -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(100, 12)):
        bus.publish(RunStart())
        bus.publish(ToolStart(call=ToolCall("call_r", "read", {"path": "a.py"}), concurrent=True))
        for n in (1, 2):
            start_task(bus, n, f"task number {n}")
        panel = app.query_one(ActivityPanel)
        assert panel.full_rows == 2 + 3
        panel.set_compact(True)
        (line,) = lines(app)
        assert line.endswith("· 1 call · 2 sub-agents running")
        end_task(bus, 2)
        assert lines(app)[0].endswith("· 1 call · 1 sub-agent running")


async def test_more_sub_agents_than_rows_say_how_many_more(frozen: None) -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(100, 20)):
        bus.publish(RunStart())
        for n in range(1, 9):
            start_task(bus, n, f"task number {n}")
        drawn = lines(app)
        panel = app.query_one(ActivityPanel)
        assert len(drawn) == panel.MAX_ROWS - 1 == panel.full_rows - 1
        assert [line for line in drawn if "task number" in line][-1].startswith("  ⠋ task number 5")
        assert drawn[-1] == "  … 3 more"


async def test_a_question_from_a_sub_agent_shows_on_its_row(frozen: None) -> None:
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(100, 12)):
        bus.publish(RunStart())
        start_task(bus, 1, "fix the build")
        call = ToolCall("c1", "bash", {"command": "make"})
        bus.publish(mark(ToolStart(call=call), "agent-1", "call_1"))
        assert "bash make" in lines(app)[1]
        ask = ApprovalRequest(request_id="r1", call=call, why="approval policy 'ask'")
        bus.publish(mark(ask, "agent-1", "call_1"))
        (row,) = lines(app)[1:]
        assert row.startswith("  ? fix the build") and WAITING_FOR_ANSWER in row
        answered = ApprovalResolved(request_id="r1", call_id="c1", decision="allow")
        bus.publish(mark(answered, "agent-1", "call_1"))
        assert WAITING_FOR_ANSWER not in lines(app)[1]


async def test_a_burst_of_events_is_painted_once(frozen: None) -> None:
    """Ctrl+C of a tree ends every sub-agent in one go: the panel paints once for the
    burst, not once per event (each paint that changes the rows lays out the screen)."""
    bus = EventBus()
    app = PanelApp(bus)
    async with app.run_test(size=(100, 12)) as pilot:
        panel = app.query_one(ActivityPanel)
        bus.publish(RunStart())
        for n in range(1, 9):
            start_task(bus, n, f"agent number {n}")
        await pilot.pause()
        # The elapsed-time ticker paints too (ten times a second): not part of this.
        panel._ticker.pause()
        painted: list[int] = []
        original = panel._paint

        def counted() -> None:
            painted.append(len(panel.entries()))
            original()

        panel._paint = counted  # type: ignore[method-assign]
        for n in range(1, 9):
            end_task(bus, n)
        assert painted == []  # nothing drawn while the burst is still coming in
        await pilot.pause()
        assert painted == [0]
        assert len(str(panel.content).splitlines()) == 1
