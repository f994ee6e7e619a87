"""Tool scheduling: grouping, event order, validation, abort and grace."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ink_tui.core.abort import AbortController
from ink_tui.core.events import Event, ToolEnd, ToolRunning, ToolSettled, ToolStart
from ink_tui.core.messages import ToolCall
from ink_tui.core.scheduler import MAX_CONCURRENT, ToolScheduler
from ink_tui.core.tool_api import ToolContext, ToolError, ToolResult

DELAY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "delay": {"type": "number"}},
    "required": ["name"],
    "additionalProperties": False,
}


@dataclass
class DelayTool:
    """Sleeps `delay` seconds, then answers with its name; records concurrency."""

    name: str = "slow_read"
    concurrency_safe: bool = True
    description: str = "Waits, then echoes."
    parameters: dict[str, Any] = field(default_factory=lambda: DELAY_SCHEMA)
    running: int = 0
    peak: int = 0
    order: list[str] = field(default_factory=list)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            async with ctx.signal.scope():
                await asyncio.sleep(args.get("delay", 0))
        finally:
            self.running -= 1
        self.order.append(args["name"])
        return ToolResult(f"done {args['name']}", details={"display": "only"})


@dataclass
class StubbornTool:
    """Ignores the abort: shields its work from cancellation."""

    name: str = "stubborn"
    concurrency_safe: bool = False
    description: str = "Ignores interrupts."
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    # It returns only once released, so a test knows it was still working.
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await self.release.wait()
        self.finished.set()
        return ToolResult("late result that must be dropped")


@dataclass
class FailingTool:
    name: str = "fails"
    concurrency_safe: bool = False
    description: str = "Raises."
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    exception: Exception = field(default_factory=lambda: ToolError("file is not text"))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise self.exception


def call(tool: str, call_id: str, **args: Any) -> ToolCall:
    return ToolCall(id=call_id, name=tool, arguments=args)


def scheduler(tools: list[Any], tmp_path: Path, grace: float = 10.0):
    events: list[Event] = []
    abort = AbortController()
    ctx = ToolContext(workspace=tmp_path, signal=abort.signal)
    return ToolScheduler(tools, ctx, events.append, grace), events, abort


def kinds(events: list[Event]) -> list[tuple[str, str]]:
    out = []
    for e in events:
        if isinstance(e, ToolStart | ToolEnd):
            out.append((e.type, e.call.id))
        elif isinstance(e, ToolRunning | ToolSettled):
            out.append((e.type, e.call_id))
    return out


async def test_slow_a_fast_b_settle_b_first_end_in_call_order(tmp_path: Path) -> None:
    tool = DelayTool()
    sched, events, _ = scheduler([tool], tmp_path)
    results = await sched.run(
        [call("slow_read", "A", name="A", delay=0.3), call("slow_read", "B", name="B", delay=0.01)]
    )
    assert [r.call_id for r in results] == ["A", "B"]
    assert kinds(events) == [
        ("tool_start", "A"),
        ("tool_start", "B"),
        ("tool_running", "A"),
        ("tool_running", "B"),
        ("tool_settled", "B"),
        ("tool_settled", "A"),
        ("tool_end", "A"),
        ("tool_end", "B"),
    ]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert ends[0].duration_s >= 0.3 > ends[1].duration_s
    # Display-only details ride on the event, never on the history message.
    assert ends[0].result.details == {"display": "only"}
    assert not hasattr(results[0], "details")


async def test_at_most_five_at_a_time_and_duration_counts_from_the_slot(tmp_path: Path) -> None:
    tool = DelayTool()
    sched, events, _ = scheduler([tool], tmp_path)
    calls = [call("slow_read", f"c{i}", name=f"c{i}", delay=0.2) for i in range(7)]
    started = time.monotonic()
    await sched.run(calls)
    assert tool.peak == MAX_CONCURRENT
    assert time.monotonic() - started >= 0.4
    durations = [e.duration_s for e in events if isinstance(e, ToolEnd)]
    # The two that waited for a slot still report about 0.2 s, not 0.4 s.
    assert all(0.19 <= d < 0.35 for d in durations), durations


async def test_unsafe_calls_run_alone_in_order_between_groups(tmp_path: Path) -> None:
    safe = DelayTool()
    unsafe = DelayTool(name="slow_write", concurrency_safe=False)
    sched, events, _ = scheduler([safe, unsafe], tmp_path)
    await sched.run(
        [
            call("slow_read", "r1", name="r1", delay=0.05),
            call("slow_read", "r2", name="r2", delay=0.01),
            call("slow_write", "w", name="w", delay=0.01),
            call("slow_read", "r3", name="r3", delay=0.01),
        ]
    )
    assert kinds(events) == [
        ("tool_start", "r1"),
        ("tool_start", "r2"),
        ("tool_running", "r1"),
        ("tool_running", "r2"),
        ("tool_settled", "r2"),
        ("tool_settled", "r1"),
        ("tool_end", "r1"),
        ("tool_end", "r2"),
        ("tool_start", "w"),
        ("tool_running", "w"),
        ("tool_end", "w"),
        # A lone safe call is not a concurrent group (it runs as soon as it is checked).
        ("tool_start", "r3"),
        ("tool_running", "r3"),
        ("tool_end", "r3"),
    ]


async def test_invalid_and_unknown_calls_get_fixable_errors(tmp_path: Path) -> None:
    tool = DelayTool()
    sched, events, _ = scheduler([tool], tmp_path)
    bad_json = ToolCall(
        id="j", name="slow_read", arguments={}, raw_arguments="{oops", arguments_error="bad JSON"
    )
    results = await sched.run(
        [
            call("slow_read", "ok", name="ok"),
            call("slow_read", "missing"),  # no required "name"
            call("nope", "unknown"),
            bad_json,
        ]
    )
    by_id = {r.call_id: r for r in results}
    assert not by_id["ok"].is_error
    assert by_id["missing"].is_error
    assert "'name' is a required property" in by_id["missing"].content
    assert '"required": ["name"]' in by_id["missing"].content
    assert by_id["unknown"].is_error and "Unknown tool 'nope'" in by_id["unknown"].content
    assert "slow_read" in by_id["unknown"].content
    assert by_id["j"].is_error and "bad JSON" in by_id["j"].content
    # Invalid calls in a group never get a slot.
    assert [e.call_id for e in events if isinstance(e, ToolRunning)] == ["ok"]


async def test_tool_errors_and_crashes_become_error_results(tmp_path: Path) -> None:
    crash = FailingTool(name="crash", exception=RuntimeError("disk on fire"))
    sched, _, _ = scheduler([FailingTool(), crash], tmp_path)
    results = await sched.run([call("fails", "a"), call("crash", "b")])
    assert results[0].is_error and results[0].content == "file is not text"
    assert results[1].is_error and results[1].content == "crash failed: RuntimeError: disk on fire"


async def test_tool_ignoring_abort_is_abandoned_after_grace(tmp_path: Path) -> None:
    stubborn = StubbornTool()
    sched, events, abort = scheduler([stubborn, DelayTool()], tmp_path, grace=0.1)
    asyncio.get_running_loop().call_later(0.05, abort.abort)
    started = time.monotonic()
    results = await sched.run([call("stubborn", "s"), call("slow_read", "after", name="x")])
    elapsed = time.monotonic() - started
    # Over after the grace, while the tool still held on: abandoned, not waited for.
    assert elapsed >= 0.14
    assert not stubborn.finished.is_set()
    assert results[0].is_error
    assert results[0].content == "Did not stop within 0.1 s of the interrupt; result abandoned."
    # The call after it never started but still has a result.
    assert results[1].is_error and "interrupted" in results[1].content
    stubborn.release.set()
    await asyncio.wait_for(stubborn.finished.wait(), 2)
    for _ in range(20):
        await asyncio.sleep(0)
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [e.message.content for e in ends] == [r.content for r in results]


async def test_abort_stops_a_cooperative_group_promptly(tmp_path: Path) -> None:
    tool = DelayTool()
    sched, _, abort = scheduler([tool], tmp_path)
    asyncio.get_running_loop().call_later(0.05, abort.abort)
    started = time.monotonic()
    results = await sched.run([call("slow_read", f"c{i}", name=f"c{i}", delay=5) for i in range(7)])
    assert time.monotonic() - started < 1
    assert len(results) == 7 and all(r.is_error for r in results)
    assert "interrupted" in results[0].content.lower()
    assert "before this call started" in results[6].content


async def test_refuse_runs_nothing(tmp_path: Path) -> None:
    tool = DelayTool()
    sched, events, _ = scheduler([tool], tmp_path)
    results = sched.refuse([call("slow_read", "x", name="x")], "cut off")
    assert results[0].is_error and results[0].content == "cut off"
    assert tool.order == []
    assert kinds(events) == [("tool_start", "x"), ("tool_end", "x")]
