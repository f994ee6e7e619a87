"""Sub-agents in the controller, against the loopback server: the abort grace for one that
ignores its abort, and the public projection of a tree (one settle, after every end)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from ink_tui.control.public_events import PublicProjection
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.events import Event, SubagentEnd
from ink_tui.tools import default_tools
from ink_tui.tools.task import TaskTool
from tests.run_helpers import make_controller, user_texts
from tests.scripted_server import Reply, ScriptedServer, text_reply, tool_reply
from tests.test_controller_settle import IgnoresAbort


def answer(server: ScriptedServer, prompt: str, *replies: Reply) -> None:
    queue = list(replies)

    def respond(body: dict[str, Any]) -> Reply | None:
        texts = user_texts(body)
        return queue.pop(0) if texts and texts[0] == prompt and queue else None

    server.responders.append(respond)


def task_call(prompt: str, call_id: str = "call_t") -> Reply:
    return tool_reply([("task", {"description": "slow one", "prompt": prompt}, call_id)])


async def test_a_subagent_ignoring_the_abort_gets_the_tools_grace_and_ends_before_the_settle(
    server: ScriptedServer, workspace: Path
) -> None:
    settings = RunSettings()
    settings.loop.abort_grace_s = 0.3
    stubborn = IgnoresAbort()
    answer(server, "SUB", tool_reply([("stubborn", {})]))
    server.push(task_call("SUB"))
    controller, events = make_controller(
        server, workspace, tools=[*default_tools(), stubborn, TaskTool()], settings=settings
    )
    projection = PublicProjection("s")
    public: list[dict[str, Any]] = []
    controller.bus.subscribe(lambda e: public.extend(projection.project(e)))
    controller.submit("go")
    await events.wait_for(lambda e: e.type == "tool_start" and e.agent_id is not None)
    started = time.monotonic()
    controller.interrupt()
    await controller.wait_idle()
    assert time.monotonic() - started >= 0.3
    assert not stubborn.returned
    (end,) = events.of("subagent_end")
    assert isinstance(end, SubagentEnd) and end.stop_reason == "aborted"
    # The tree ended before the run did; nothing of the sub-agent after its end.
    index = events.events.index
    assert index(end) < index(events.of("run_end")[-1])
    assert [e for e in events.events[index(end) + 1 :] if e.agent_id is not None] == []
    (tool_message,) = [m for m in controller.history if m.role == "tool"]
    assert tool_message.is_error
    stubborn.release.set()
    for _ in range(20):
        await asyncio.sleep(0)
    assert [e for e in events.events[index(end) + 1 :] if e.agent_id is not None] == []
    types = [e["type"] for e in public]
    assert types.count("agent_settled") == 1
    assert types.index("subagent_end") < types.index("agent_settled")
    assert controller.subagents.running == {}


async def test_the_projection_marks_only_a_subagents_events(
    server: ScriptedServer, workspace: Path
) -> None:
    answer(server, "SUB", text_reply("sub answer"))
    server.push(task_call("SUB"), text_reply("top answer"))
    controller, _events = make_controller(server, workspace, tools=[*default_tools(), TaskTool()])
    projection = PublicProjection("s")
    seen: list[tuple[Event, list[dict[str, Any]]]] = []
    controller.bus.subscribe(lambda e: seen.append((e, list(projection.project(e)))))
    controller.submit("go")
    await controller.wait_idle()
    marked = [(e, p) for e, p in seen if e.agent_id is not None]
    assert marked and all(p["agent_id"] == "agent-1" for _, ps in marked for p in ps)
    assert all(p["parent_call_id"] == "call_t" for _, ps in marked for p in ps)
    unmarked = [p for e, ps in seen if e.agent_id is None for p in ps]
    assert not [p for p in unmarked if "agent_id" in p or "parent_call_id" in p]
    types = [p["type"] for _, ps in marked for p in ps]
    assert "subagent_start" in types and "subagent_end" in types
    assert not {"agent_start", "agent_end", "state_change", "agent_settled"} & set(types)
    # The sub-agent's run id is the parent's.
    assert {e.run_id for e, _ in marked} == {"run-1"}


async def test_max_parallel_holds_further_tasks_until_a_slot_frees(
    server: ScriptedServer, workspace: Path
) -> None:
    settings = RunSettings(subagents_max_parallel=1)
    answer(server, "ONE", text_reply("one done"))
    answer(server, "TWO", text_reply("two done"))
    calls = [
        ("task", {"description": "one", "prompt": "ONE"}, "call_1"),
        ("task", {"description": "two", "prompt": "TWO"}, "call_2"),
    ]
    server.push(tool_reply(calls), text_reply("both"))
    controller, events = make_controller(
        server, workspace, tools=[*default_tools(), TaskTool()], settings=settings
    )
    controller.submit("go")
    await controller.wait_idle()
    order = [(e.type, e.parent_call_id) for e in events.events if e.type.startswith("subagent")]
    assert len(order) == 4
    # One slot: the second starts only once the first has ended.
    assert order[0][0] == "subagent_start" and order[1] == ("subagent_end", order[0][1])
    tool_messages = [m for m in controller.history if m.role == "tool"]
    assert [m.content for m in tool_messages] == ["one done", "two done"]
