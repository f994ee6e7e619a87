"""Waiting for an answer is shown as waiting, and a tool's time starts when it runs.

While an approval question is open the activity panel and the status bar say "waiting
for your answer" (no spinner, no count for the call that waits), the public state says
`"waiting": "approval"` (RPC `get_state`, `AgentSession.snapshot()`), and the call's
`tool_running` comes after the answer, so its shown and recorded duration leave the
wait out. Times come from controlled clocks, never from sleeping."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession
from ink_tui.control.run_settings import RunSettings
from ink_tui.core import scheduler as scheduler_module
from ink_tui.core.abort import AbortController, AbortSignal
from ink_tui.core.events import Event, ToolEnd
from ink_tui.core.messages import ToolCall
from ink_tui.core.scheduler import ToolScheduler
from ink_tui.core.tool_api import ToolContext, ToolResult
from ink_tui.ui import clock
from ink_tui.ui.app import InkApp
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.widgets.activity_panel import ActivityPanel
from ink_tui.ui.widgets.approval_question import ApprovalQuestion
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import make_app, type_text, wait_until

ASK = RunSettings(approval="ask")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL", "INK_APPROVAL"):
        monkeypatch.delenv(name, raising=False)


class FakeTime:
    """The scheduler's `time` module: a clock that moves only when told to."""

    def __init__(self, at: float) -> None:
        self.at = at

    def monotonic(self) -> float:
        return self.at


@dataclass
class GatedBash:
    """A `bash` (so the approval policy asks) that runs until the test opens its gate,
    and moves the fake clock by `takes` seconds while it runs."""

    clock: FakeTime | None = None
    takes: float = 0.0
    name: str = "bash"
    description: str = "Runs a command."
    parameters: dict[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        }
    )
    concurrency_safe: bool = False
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        await self.gate.wait()
        if self.clock is not None:
            self.clock.at += self.takes
        return ToolResult(f"ran {args['command']}")


async def test_the_duration_starts_after_the_check_lets_the_call_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeTime(100.0)
    monkeypatch.setattr(scheduler_module, "time", fake)
    answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    asked = asyncio.Event()
    events: list[Any] = []

    async def ask(call: ToolCall, signal: AbortSignal) -> str | None:
        events.append("asked")
        asked.set()
        return await answer

    tool = GatedBash(clock=fake, takes=2.0)
    tool.gate.set()
    ctx = ToolContext(workspace=tmp_path, signal=AbortController().signal, before_tool=[ask])
    scheduler = ToolScheduler([tool], ctx, events.append)
    run = asyncio.create_task(scheduler.run([ToolCall("c1", "bash", {"command": "ls"})]))
    await asyncio.wait_for(asked.wait(), 10)
    fake.at += 60.0  # the user takes a minute to answer
    events.append("answered")
    answer.set_result(None)
    await run
    kinds = [e if isinstance(e, str) else e.type for e in events]
    assert kinds == ["tool_start", "asked", "answered", "tool_running", "tool_end"]
    [end] = [e for e in events if isinstance(e, ToolEnd)]
    assert end.duration_s == 2.0  # the run, not the minute of waiting


async def test_a_refused_call_never_gets_tool_running(tmp_path: Path) -> None:
    events: list[Event] = []

    async def deny(call: ToolCall, signal: AbortSignal) -> str | None:
        return "Denied."

    ctx = ToolContext(workspace=tmp_path, signal=AbortController().signal, before_tool=[deny])
    await ToolScheduler([GatedBash()], ctx, events.append).run(
        [ToolCall("c1", "bash", {"command": "ls"})]
    )
    assert [e.type for e in events] == ["tool_start", "tool_end"]


@pytest.fixture
def frozen_clock() -> Iterator[None]:
    clock.freeze(1000.0)
    try:
        yield
    finally:
        clock.freeze(None)


def _text(widget: Any) -> str:
    return str(widget.render())


async def test_the_screen_says_waiting_for_your_answer_and_counts_from_the_answer(
    server: ScriptedServer, workspace: Path, frozen_clock: None
) -> None:
    tool = GatedBash()
    server.push(tool_reply([("bash", {"command": "make test"})]), text_reply("done"))
    app, recorder = make_app(server, workspace, tools=[tool], settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        assert isinstance(app, InkApp)
        await wait_until(pilot, lambda: app.controller is not None)
        await type_text(pilot, "test it")
        await pilot.press("enter")
        question = app.query_one(ApprovalQuestion)
        await wait_until(pilot, lambda: question.is_open, what="the question")
        clock.freeze(1026.0)  # 26 s later, still unanswered
        await pilot.pause(0.2)  # the panel's ticker runs a few times

        panel, status = app.query_one(ActivityPanel), app.query_one(StatusBar)
        [block] = app.query_one(Transcript).blocks_of(ToolBlock)
        shown = _text(panel)
        assert shown.splitlines()[0] == "? waiting for your answer"
        assert shown.splitlines()[1] == "  ? bash make test  waiting for your answer"
        assert "running tools" not in shown and not any(f in shown for f in clock.SPINNER_FRAMES)
        assert "waiting for your answer" in _text(status)
        assert block.state == "asking"
        assert str(block.header_text()) == "? bash make test  waiting for your answer"

        await pilot.press("ctrl+g", "y")
        await wait_until(pilot, tool.started.is_set, what="the tool to run")
        await wait_until(pilot, lambda: bool(recorder.of("tool_running")))
        await pilot.pause(0.2)
        # It runs now, and its time counts from the answer, not from the question.
        [row] = panel.rows.values()
        assert row.started == 1026.0 and not row.asking
        assert block.state == "running" and block.started == 1026.0
        assert str(block.header_text()).endswith("bash make test  0.0s")
        shown = _text(panel)
        assert "running tools 0.0s" in shown and "make test  0.0s" in shown
        assert "waiting for your answer" not in shown
        assert "waiting for your answer" not in _text(status)

        tool.gate.set()
        assert app.controller is not None
        await app.controller.wait_idle()


async def test_only_the_waiting_call_waits_others_keep_their_spinners(
    server: ScriptedServer, workspace: Path, frozen_clock: None
) -> None:
    """A concurrent read that runs while a question is open keeps its spinner and time."""
    from ink_tui.ui.widgets.activity_panel import _Row

    app, _ = make_app(server, workspace, settings=ASK)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_until(pilot, lambda: bool(app.query(ActivityPanel)))
        panel = app.query_one(ActivityPanel)
        panel.phase = "running tools"
        panel.rows = {"r": _Row("read a.py", False, 990.0), "b": _Row("bash x", False, 1000.0)}
        panel.asking = {"approval-1": "b"}
        panel.rows["b"].asking = True
        panel._paint()
        lines = _text(panel).splitlines()
        assert lines[0] == "? waiting for your answer"
        assert lines[1].endswith("read a.py  10s") and lines[1].strip()[0] in clock.SPINNER_FRAMES
        assert lines[2] == "  ? bash x  waiting for your answer"


async def test_get_state_over_rpc_says_it_waits_for_an_approval(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    from ink_tui.rpc_client import RpcClient

    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    model = ["--base-url", server.base_url, "--model", "m", "--api-key", "k"]
    server.push(tool_reply([("bash", {"command": "touch asked"})]), text_reply("ok"))
    async with RpcClient.spawn([*model, "--approval", "ask"], cwd=workspace, env=env) as ink:
        assert (await ink.command("get_state"))["waiting"] is None
        await ink.command("prompt", message="go")
        asked = await ink.wait_for(lambda e: e["type"] == "approval_request")
        state = await ink.command("get_state")
        assert state["waiting"] == "approval" and state["busy"] is True
        assert state["approvals_open"] == [asked["request_id"]]
        await ink.command("approve", request_id=asked["request_id"], decision="allow")
        await ink.wait_settled()
        state = await ink.command("get_state")
        assert state["waiting"] is None and state["approvals_open"] == []
        by_type = {e["type"]: e for e in ink.seen if e.get("call_id") == asked["call_id"]}
        # The call runs (tool_execution_running) only after the answer.
        assert (
            by_type["tool_execution_start"]["seq"]
            < by_type["approval_resolved"]["seq"]
            < by_type["tool_execution_running"]["seq"]
            < by_type["tool_execution_end"]["seq"]
        )
    assert (workspace / "asked").exists()


async def test_the_python_api_snapshot_says_it_waits(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch asked"})]), text_reply("ok"))
    session = await AgentSession.open(
        workspace, base_url=server.base_url, model="m", approval="ask", extensions=False
    )
    try:
        questions: list[dict[str, Any]] = []
        asked = asyncio.Event()

        def on_event(event: Any) -> None:
            if event["type"] == "approval_request":
                questions.append(dict(event))
                asked.set()

        session.subscribe(on_event)
        assert session.snapshot()["waiting"] is None
        prompt = asyncio.create_task(session.prompt("go"))
        await asyncio.wait_for(asked.wait(), 10)
        snapshot = session.snapshot()
        assert snapshot["waiting"] == "approval"
        assert snapshot["approvals_open"] == [questions[0]["request_id"]]
        session.answer_approval(questions[0]["request_id"], "deny")
        await asyncio.wait_for(prompt, 10)
        assert session.snapshot()["waiting"] is None
    finally:
        await session.aclose()
