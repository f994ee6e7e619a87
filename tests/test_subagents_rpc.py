"""Sub-agents (`task` calls) through the real process: `ink --mode rpc` against the
loopback scripted server, whose responders answer each sub-agent by its prompt (its
requests may arrive in any order), and gates hold a sub-agent's stream open."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.rpc_client import RpcClient, RpcError
from tests.process_markers import kill_marked, new_marker, wait_alive, wait_gone
from tests.rpc_process import isolated_env, spawn_rpc
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, Reply, ScriptedServer, text_reply, tool_reply

TOP_LEVEL_ONLY = ("agent_start", "agent_end", "state_change", "agent_settled")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


@pytest.fixture
async def ink(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> AsyncIterator[RpcClient]:
    async with spawn_rpc(server, workspace, env) as client:
        yield client


def first_user(body: dict[str, Any]) -> str:
    texts = user_texts(body)
    return texts[0] if texts else ""


def answer_subagents(server: ScriptedServer, replies: dict[str, list[Reply]]) -> None:
    """Answer each sub-agent's requests, in its own order, by the prompt it was given."""
    queues = {prompt: deque(list_) for prompt, list_ in replies.items()}

    def respond(body: dict[str, Any]) -> Reply | None:
        queue = queues.get(first_user(body))
        return queue.popleft() if queue else None

    server.responders.append(respond)


def task(description: str, prompt: str, call_id: str) -> tuple[str, dict[str, Any], str]:
    return ("task", {"description": description, "prompt": prompt}, call_id)


def requests_of(server: ScriptedServer, prompt: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if first_user(r) == prompt]


def of_agent(events: list[dict[str, Any]], agent_id: str | None) -> list[dict[str, Any]]:
    return [e for e in events if e.get("agent_id") == agent_id]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"]["text"] for e in events if e["type"] == "message_update")


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


async def started(ink: RpcClient, description: str) -> dict[str, Any]:
    return await ink.wait_for(
        lambda e: e["type"] == "subagent_start" and e["description"] == description
    )


def assert_top_level_events_unmarked(events: list[dict[str, Any]]) -> None:
    """A sub-agent's run never looks like the top-level run's start, end or settle."""
    for event in events:
        if event["type"] in TOP_LEVEL_ONLY:
            assert "agent_id" not in event and "parent_call_id" not in event, event


async def test_a_task_runs_a_fresh_subagent_whose_answer_reaches_the_parent(
    ink: RpcClient, server: ScriptedServer
) -> None:
    server.push(text_reply("the first exchange"))
    await ink.command("prompt", message="EARLIER-CONVERSATION")
    await ink.wait_settled()
    sub_prompt = "Find where total() is defined and report the file."
    answer_subagents(server, {sub_prompt: [text_reply("total() is defined in sum.py")]})
    server.push(
        tool_reply([task("find total", sub_prompt, "call_task_1")]),
        text_reply("It is in sum.py."),
    )
    mark = len(ink.seen)
    await ink.command("prompt", message="where is total?")
    settled = await ink.wait_settled()
    assert settled["stop_reason"] == "completed"

    (sub_request,) = requests_of(server, sub_prompt)
    # Fresh history: its prompt alone, none of the parent's conversation.
    assert user_texts(sub_request) == [sub_prompt]
    assert "EARLIER-CONVERSATION" not in str(sub_request["messages"])
    assert "where is total?" not in str(sub_request["messages"])
    assert "sub-agent" in sub_request["messages"][0]["content"]
    # One level deep by default: the sub-agent is offered every tool but `task`.
    parent_tools = {t["function"]["name"] for t in server.requests[1]["tools"]}
    sub_tools = {t["function"]["name"] for t in sub_request["tools"]}
    assert "task" in parent_tools and sub_tools == parent_tools - {"task"}
    # Its final answer is the task call's result in the parent's next request.
    assert tool_results(server.requests[-1]) == {"call_task_1": "total() is defined in sum.py"}

    events = ink.seen[mark:]
    start = next(e for e in events if e["type"] == "subagent_start")
    agent_id = start["agent_id"]
    assert start["parent_call_id"] == "call_task_1" and start["prompt"] == sub_prompt
    assert start["depth"] == 1 and start["parent_agent_id"] is None
    mine = of_agent(events, agent_id)
    assert all(e["parent_call_id"] == "call_task_1" for e in mine)
    assert text_of(mine) == "total() is defined in sum.py"
    assert text_of(of_agent(events, None)) == "It is in sum.py."
    end = next(e for e in mine if e["type"] == "subagent_end")
    assert end["stop_reason"] == "completed" and end["result"] == "total() is defined in sum.py"
    # Named at its end too, for a client that joined after its start.
    assert end["description"] == start["description"] == "find total"
    types = [e["type"] for e in events]
    assert types.count("agent_settled") == 1 and types.count("agent_start") == 1
    assert events.index(end) < types.index("agent_settled")
    assert_top_level_events_unmarked(events)
    # The parent's conversation holds the task call and its result, nothing of the
    # sub-agent's own messages.
    messages = (await ink.command("get_messages"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2 + ["tool", "assistant"]
    assert messages[4]["content"] == "total() is defined in sum.py"


async def test_two_tasks_run_in_parallel_and_each_event_says_whose_it_is(
    ink: RpcClient, server: ScriptedServer
) -> None:
    gate_a, gate_b = Gate(), Gate()
    answer_subagents(
        server,
        {
            "PROMPT-A": [text_reply("alpha answer here", gate=gate_a)],
            "PROMPT-B": [text_reply("beta answer here", gate=gate_b)],
        },
    )
    server.push(
        tool_reply([task("A", "PROMPT-A", "call_a"), task("B", "PROMPT-B", "call_b")]),
        text_reply("both done"),
    )
    await ink.command("prompt", message="do both")
    # Both streams are open at once: they run side by side.
    await wait_gate(gate_a)
    await wait_gate(gate_b)
    a, b = await started(ink, "A"), await started(ink, "B")
    assert {a["parent_call_id"], b["parent_call_id"]} == {"call_a", "call_b"}
    gate_b.open()
    end_b = await ink.wait_for(
        lambda e: e["type"] == "subagent_end" and e["agent_id"] == b["agent_id"]
    )
    assert not [e for e in ink.seen if e["type"] == "subagent_end" and e is not end_b]
    gate_a.open()
    await ink.wait_settled()

    events = ink.seen
    assert text_of(of_agent(events, a["agent_id"])) == "alpha answer here"
    assert text_of(of_agent(events, b["agent_id"])) == "beta answer here"
    for agent, call in ((a, "call_a"), (b, "call_b")):
        assert {e["parent_call_id"] for e in of_agent(events, agent["agent_id"])} == {call}
    # Interleaved: A had streamed before B ended, and ended after it.
    first_a = next(
        i
        for i, e in enumerate(events)
        if e.get("agent_id") == a["agent_id"] and e["type"] == "message_update"
    )
    end_a = next(
        i
        for i, e in enumerate(events)
        if e.get("agent_id") == a["agent_id"] and e["type"] == "subagent_end"
    )
    assert first_a < events.index(end_b) < end_a
    assert tool_results(server.requests[-1]) == {
        "call_a": "alpha answer here",
        "call_b": "beta answer here",
    }
    assert [e["type"] for e in events].count("agent_settled") == 1
    assert_top_level_events_unmarked(events)


async def test_stopping_one_subagent_kills_its_process_and_the_parent_goes_on(
    ink: RpcClient, server: ScriptedServer
) -> None:
    marker = new_marker()
    gate_b = Gate()
    answer_subagents(
        server,
        {
            "PROMPT-A": [
                tool_reply([("bash", {"command": f"sleep {marker}"})], text="Starting the run."),
            ],
            "PROMPT-B": [text_reply("beta answer", gate=gate_b)],
        },
    )
    server.push(
        tool_reply([task("A", "PROMPT-A", "call_a"), task("B", "PROMPT-B", "call_b")]),
        text_reply("parent carries on"),
    )
    try:
        await ink.command("prompt", message="do both")
        a = await started(ink, "A")
        b = await started(ink, "B")
        await wait_gate(gate_b)
        wait_alive([marker], within=30)
        stopped = await ink.command("abort_agent", agent_id=a["agent_id"])
        assert stopped["stop_reason"] == "stopped"
        assert stopped["result"].startswith("Stopped by the user")
        assert "Starting the run." in stopped["result"]
        assert not wait_gone([marker], within=15)
        # B runs on, untouched, and so does the parent.
        assert [x["agent_id"] for x in (await ink.command("get_agents"))["agents"]] == [
            b["agent_id"]
        ]
        with pytest.raises(RpcError, match="already ended"):
            await ink.command("abort_agent", agent_id=a["agent_id"])
        gate_b.open()
        settled = await ink.wait_settled()
    finally:
        kill_marked(marker)
    assert settled["stop_reason"] == "completed"
    results = tool_results(server.requests[-1])
    assert results["call_a"].startswith("Stopped by the user")
    assert results["call_b"] == "beta answer"
    assert user_texts(server.requests[-1]) == ["do both"]
    assert text_of(of_agent(ink.seen, None)) == "parent carries on"
    assert len(requests_of(server, "PROMPT-A")) == 1


async def test_a_steer_for_one_subagent_reaches_its_next_request_only(
    ink: RpcClient, server: ScriptedServer
) -> None:
    gate = Gate()
    answer_subagents(
        server,
        {"PROMPT-A": [text_reply("a first look", gate=gate), text_reply("a, steered")]},
    )
    server.push(tool_reply([task("A", "PROMPT-A", "call_a")]), text_reply("parent done"))
    await ink.command("prompt", message="go")
    a = await started(ink, "A")
    await wait_gate(gate)
    with pytest.raises(RpcError, match="no sub-agent has id"):
        await ink.command("steer", message="lost?", agent_id="agent-999")
    queued = await ink.command("steer", message="STEER-FOR-A", agent_id=a["agent_id"])
    assert queued["agent_id"] == a["agent_id"] and queued["queued"]["text"] == "STEER-FOR-A"
    update = await ink.wait_for(
        lambda e: e["type"] == "queue_update" and e.get("agent_id") == a["agent_id"]
    )
    assert [x["text"] for x in update["entries"]] == ["STEER-FOR-A"]
    gate.open()
    await ink.wait_settled()
    first, second = requests_of(server, "PROMPT-A")
    assert user_texts(second) == ["PROMPT-A", "STEER-FOR-A"]
    assert "STEER-FOR-A" not in str(first["messages"])
    parent = [r for r in server.requests if first_user(r) == "go"]
    assert parent and all("STEER-FOR-A" not in str(r["messages"]) for r in parent)
    assert tool_results(parent[-1]) == {"call_a": "a, steered"}
    # It has ended: input for it is refused by name, and nothing was queued anywhere.
    with pytest.raises(RpcError, match="already ended"):
        await ink.command("follow_up", message="too late", agent_id=a["agent_id"])
    assert (await ink.command("get_queue"))["entries"] == []


async def test_abort_stops_the_whole_tree_settles_once_and_restores_the_queue(
    ink: RpcClient, server: ScriptedServer
) -> None:
    marker = new_marker()
    answer_subagents(
        server,
        {
            f"PROMPT-{n}": [tool_reply([("bash", {"command": f"sleep {marker}{n}"})])]
            for n in (1, 2)
        },
    )
    server.push(tool_reply([task("one", "PROMPT-1", "call_1"), task("two", "PROMPT-2", "call_2")]))
    try:
        await ink.command("prompt", message="run both")
        wait_alive([f"{marker}1", f"{marker}2"], within=30)
        await ink.command("follow_up", message="F1")
        result = await ink.command("abort")
        assert result["stop_reason"] == "aborted" and result["restored_text"] == "F1"
        assert not wait_gone([f"{marker}1", f"{marker}2"], within=15)
    finally:
        kill_marked(marker)
    events = ink.seen
    types = [e["type"] for e in events]
    assert types.count("agent_settled") == 1
    ends = [e for e in events if e["type"] == "subagent_end"]
    assert sorted(e["stop_reason"] for e in ends) == ["aborted", "aborted"]
    assert max(events.index(e) for e in ends) < types.index("agent_settled")
    assert (await ink.command("get_agents"))["agents"] == []
    assert_top_level_events_unmarked(events)


async def test_a_subagents_approval_question_names_it_and_its_task(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    answer_subagents(
        server,
        {"PROMPT-A": [tool_reply([("bash", {"command": "echo from-a"})]), text_reply("ran it")]},
    )
    server.push(tool_reply([task("check echo", "PROMPT-A", "call_a")]), text_reply("ok"))
    async with spawn_rpc(server, workspace, env, "--approval", "ask") as ink:
        await ink.command("prompt", message="go")
        asked = await ink.wait_for(lambda e: e["type"] == "approval_request")
        start = await started(ink, "check echo")
        assert asked["agent_id"] == start["agent_id"]
        assert asked["parent_call_id"] == "call_a"
        assert asked["agent_description"] == "check echo"
        assert asked["tool_name"] == "bash"
        await ink.command("approve", request_id=asked["request_id"], decision="allow")
        resolved = await ink.wait_for(lambda e: e["type"] == "approval_resolved")
        assert resolved["agent_id"] == start["agent_id"]
        settled = await ink.wait_settled()
    assert settled["stop_reason"] == "completed"
    second = requests_of(server, "PROMPT-A")[-1]
    assert "from-a" in str(tool_results(second))


async def test_a_subagents_conversation_is_recorded_apart_from_the_parents(
    ink: RpcClient, server: ScriptedServer
) -> None:
    answer_subagents(server, {"SUB-PROMPT": [text_reply("the sub-agent's answer")]})
    server.push(tool_reply([task("look", "SUB-PROMPT", "call_t")]), text_reply("top answer"))
    await ink.command("prompt", message="go")
    await ink.wait_settled()
    state = await ink.command("get_state")
    # Closing the session (a new one) writes its file out; then it is resumed.
    await ink.command("new_session")
    resumed = await ink.command("switch_session", session_id=state["session_id"])
    assert resumed["message_count"] == 4
    messages = (await ink.command("get_messages"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2]["content"] == "the sub-agent's answer"
    assert "SUB-PROMPT" not in [m.get("content") for m in messages]
    text = await asyncio.to_thread(Path(state["session_file"]).read_text)
    lines = [json.loads(line) for line in text.splitlines()]
    (sub,) = [line for line in lines if line["type"] == "subagent"]
    assert sub["parent_call_id"] == "call_t" and sub["description"] == "look"
    assert sub["stop_reason"] == "completed"
    assert [(e["type"], e.get("content", e.get("text"))) for e in sub["entries"]] == [
        ("user", "SUB-PROMPT"),
        ("assistant", "the sub-agent's answer"),
    ]
    warnings = [e for e in ink.seen if e["type"] == "notice" and e["level"] == "warning"]
    assert warnings == []
