"""Input for one sub-agent through the real `ink --mode rpc` process: `steer` and
`follow_up` with an `agent_id` reach that sub-agent's next model request (not its
sibling's, not the parent's), and input for a sub-agent that has ended is refused by
name, with nothing queued anywhere. The scripted server answers each sub-agent by its
prompt (their requests arrive in any order) and records every request."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.rpc_client import RpcClient, RpcError
from tests.rpc_process import isolated_env, spawn_rpc
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, Reply, ScriptedServer, text_reply, tool_reply


@pytest.fixture
async def ink(server: ScriptedServer, workspace: Path, tmp_path: Path) -> AsyncIterator[RpcClient]:
    async with spawn_rpc(server, workspace, isolated_env(tmp_path)) as client:
        yield client


def first_user(body: dict[str, Any]) -> str:
    texts = user_texts(body)
    return texts[0] if texts else ""


def answer_subagents(server: ScriptedServer, replies: dict[str, list[Reply]]) -> None:
    queues = {prompt: deque(list_) for prompt, list_ in replies.items()}

    def respond(body: dict[str, Any]) -> Reply | None:
        queue = queues.get(first_user(body))
        return queue.popleft() if queue else None

    server.responders.append(respond)


def task(description: str, prompt: str, call_id: str) -> tuple[str, dict[str, Any], str]:
    return ("task", {"description": description, "prompt": prompt}, call_id)


def requests_of(server: ScriptedServer, prompt: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if first_user(r) == prompt]


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


async def started(ink: RpcClient, description: str) -> str:
    start = await ink.wait_for(
        lambda e: e["type"] == "subagent_start" and e["description"] == description
    )
    return str(start["agent_id"])


async def test_steer_and_follow_up_reach_the_named_subagent_only(
    ink: RpcClient, server: ScriptedServer
) -> None:
    gate_a, gate_b = Gate(), Gate()
    answer_subagents(
        server,
        {
            "PROMPT-A": [text_reply("a first look", gate=gate_a), text_reply("a, steered")],
            "PROMPT-B": [text_reply("b first answer", gate=gate_b), text_reply("b, followed up")],
        },
    )
    server.push(
        tool_reply([task("A", "PROMPT-A", "call_a"), task("B", "PROMPT-B", "call_b")]),
        text_reply("parent done"),
    )
    await ink.command("prompt", message="do both")
    a, b = await started(ink, "A"), await started(ink, "B")
    await wait_gate(gate_a)
    await wait_gate(gate_b)
    steered = await ink.command("steer", message="STEER-FOR-A", agent_id=a)
    assert steered["agent_id"] == a and steered["queued"]["mode"] == "steer"
    followed = await ink.command("follow_up", message="FOLLOW-FOR-B", agent_id=b)
    assert followed["agent_id"] == b and followed["queued"]["mode"] == "follow_up"
    # Queued with the sub-agents, not with the parent.
    assert (await ink.command("get_queue"))["entries"] == []
    queues = {x["agent_id"]: x["queue"] for x in (await ink.command("get_agents"))["agents"]}
    assert queues == {a: ["STEER-FOR-A"], b: ["FOLLOW-FOR-B"]}
    gate_a.open()
    gate_b.open()
    settled = await ink.wait_settled()
    assert settled["stop_reason"] == "completed"

    first_a, second_a = requests_of(server, "PROMPT-A")
    assert user_texts(second_a) == ["PROMPT-A", "STEER-FOR-A"]
    assert "STEER-FOR-A" not in str(first_a["messages"])
    # The follow-up waited for B to stop, then started its next turn.
    first_b, second_b = requests_of(server, "PROMPT-B")
    assert user_texts(second_b) == ["PROMPT-B", "FOLLOW-FOR-B"]
    assert "b first answer" in str(second_b["messages"])
    for body in (first_b, second_b):
        assert "STEER-FOR-A" not in str(body["messages"])
    for body in (first_a, second_a):
        assert "FOLLOW-FOR-B" not in str(body["messages"])
    parent = [r for r in server.requests if first_user(r) == "do both"]
    assert len(parent) == 2
    for body in parent:
        assert "STEER-FOR-A" not in str(body["messages"])
        assert "FOLLOW-FOR-B" not in str(body["messages"])
    assert tool_results(parent[-1]) == {"call_a": "a, steered", "call_b": "b, followed up"}
    # Each took its input as its own user message (after its prompt), stamped with its id.
    taken = {
        (e["agent_id"], e["kind"], e["text"])
        for e in ink.seen
        if e["type"] == "user_message" and "agent_id" in e and e["kind"] != "prompt"
    }
    assert taken == {(a, "steer", "STEER-FOR-A"), (b, "follow_up", "FOLLOW-FOR-B")}


async def test_input_for_an_ended_subagent_is_refused_and_changes_nothing(
    ink: RpcClient, server: ScriptedServer
) -> None:
    parent_gate = Gate()
    answer_subagents(server, {"PROMPT-A": [text_reply("a is done")]})
    server.push(
        tool_reply([task("A", "PROMPT-A", "call_a")]),
        text_reply("parent still writing", gate=parent_gate),
    )
    await ink.command("prompt", message="go")
    a = await started(ink, "A")
    await ink.wait_for(lambda e: e["type"] == "subagent_end" and e["agent_id"] == a)
    # The parent is still running (held at its next request), its sub-agent has ended.
    await wait_gate(parent_gate)
    assert (await ink.command("get_state"))["state"] == "running"
    seen = len(ink.seen)
    with pytest.raises(RpcError, match=f"{a}.*already ended"):
        await ink.command("steer", message="TOO-LATE", agent_id=a)
    with pytest.raises(RpcError, match="already ended"):
        await ink.command("follow_up", message="TOO-LATE-2", agent_id=a)
    with pytest.raises(RpcError, match="no sub-agent has id 'agent-404'"):
        await ink.command("steer", message="NOBODY", agent_id="agent-404")
    # Nothing was queued: not for the parent (it was not taken as the parent's steer),
    # not for anyone, and no event said otherwise.
    assert (await ink.command("get_queue"))["entries"] == []
    assert (await ink.command("get_agents"))["agents"] == []
    assert [e for e in ink.seen[seen:] if e["type"] == "queue_update"] == []
    parent_gate.open()
    settled = await ink.wait_settled()
    assert settled["stop_reason"] == "completed"
    assert len(requests_of(server, "PROMPT-A")) == 1
    for body in server.requests:
        for text in ("TOO-LATE", "TOO-LATE-2", "NOBODY"):
            assert text not in str(body["messages"])
    assert (await ink.command("get_queue"))["entries"] == []
