"""`ink --mode rpc --rpc-dialect pi`, line by line: the commands and event shapes that
pi's own client (tests/test_rpc_pi_client.py) does not reach, read with ink's client,
which takes any response and event as it comes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.rpc_client import RpcClient, RpcError
from tests.rpc_process import isolated_env, spawn_rpc
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import (
    Gate,
    Reply,
    ScriptedServer,
    chunk,
    error_reply,
    text_reply,
    tool_reply,
)


@pytest.fixture
async def pi(server: ScriptedServer, workspace: Path, tmp_path: Path) -> AsyncIterator[RpcClient]:
    async with spawn_rpc(
        server, workspace, isolated_env(tmp_path), "--rpc-dialect", "pi"
    ) as client:
        yield client


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def _inner(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["assistantMessageEvent"] for e in events if e["type"] == "message_update"]


async def test_thinking_text_and_tool_calls_stream_as_pi_blocks(
    pi: RpcClient, server: ScriptedServer
) -> None:
    reply = tool_reply([("read", {"path": "README.md"})], text="Reading.")
    # Thinking first, then the reply's text and its call.
    reply.steps[0:0] = [
        chunk({"reasoning_content": "Let me "}),
        chunk({"reasoning_content": "look."}),
    ]
    server.push(reply, text_reply("It is empty."))
    assert await pi.command("prompt", message="read the readme") == {"disposition": "started"}
    await pi.wait_settled()

    inner = _inner(pi.seen)
    blocks = [(u["type"], u["contentIndex"]) for u in inner if not u["type"].endswith("_delta")]
    assert blocks[:7] == [
        ("thinking_start", 0),
        ("thinking_end", 0),
        ("text_start", 1),
        ("text_end", 1),
        ("toolcall_start", 2),
        ("toolcall_end", 2),
        ("text_start", 0),
    ]
    call_delta = next(u for u in inner if u["type"] == "toolcall_delta")
    assert call_delta == {
        "type": "toolcall_delta",
        "contentIndex": 2,
        "delta": '{"path": "README.md"}',
    }
    first = next(
        e["message"]
        for e in pi.seen
        if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    )
    assert first["content"] == [
        {"type": "thinking", "thinking": "Let me look."},
        {"type": "text", "text": "Reading."},
        {
            "type": "toolCall",
            "id": "call_0_read",
            "name": "read",
            "arguments": {"path": "README.md"},
        },
    ]
    assert first["stopReason"] == "toolUse"
    assert first["usage"]["output"] == 5
    turn_end = next(e for e in pi.seen if e["type"] == "turn_end")
    assert [r["toolCallId"] for r in turn_end["toolResults"]] == ["call_0_read"]
    types = _types(pi.seen)
    # No ink envelope, no state_change, and exactly one settle.
    assert "state_change" not in types and types.count("agent_settled") == 1
    assert all("seq" not in e for e in pi.seen)

    messages = (await pi.command("get_messages"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert messages[0]["entryId"]
    tree = await pi.command("get_tree")
    assert tree["leafId"] and tree["tree"][0]["entry"]["message"]["role"] == "user"
    assert tree["tree"][0]["children"]


async def test_queue_editing_clear_queue_and_abort(pi: RpcClient, server: ScriptedServer) -> None:
    gate = Gate()
    server.push(text_reply("a long answer", gate=gate))
    await pi.command("prompt", message="write it")
    await wait_gate(gate)
    with pytest.raises(RpcError, match="Agent is already processing"):
        await pi.command("prompt", message="not said how")
    with pytest.raises(RpcError, match="images are not supported"):
        await pi.command(
            "steer", message="look", images=[{"type": "image", "data": "", "mimeType": "image/png"}]
        )
    with pytest.raises(RpcError, match="busy: ink runs shell commands between runs"):
        await pi.command("bash", command="ls")
    first = await pi.command("steer", message="keep it short")
    second = await pi.command("prompt", message="then test it", streamingBehavior="followUp")
    assert first["disposition"] == "queued" and second == {"disposition": "queued"}

    queue = await pi.command("edit_queue_entry", entryId=first["entryId"], mode="followUp")
    assert [(e["text"], e["mode"]) for e in queue["entries"]] == [
        ("keep it short", "followUp"),
        ("then test it", "followUp"),
    ]
    with pytest.raises(RpcError, match="no queued entry"):
        await pi.command("remove_queue_entry", entryId=999)
    update = await pi.wait_for(
        lambda e: e["type"] == "queue_update" and e["steering"] == [] and len(e["followUp"]) == 2
    )
    assert update["entries"][0]["id"] == first["entryId"]

    assert await pi.command("clear_queue") == {
        "steering": [],
        "followUp": ["keep it short", "then test it"],
    }
    aborted = await pi.command("abort")
    assert aborted["aborted"] is True and aborted["stopReason"] == "aborted"
    settled = await pi.wait_for(lambda e: e["type"] == "agent_settled")
    assert settled["aborted"] is True
    # A reply cut short (if any of it had come) still ends its message.
    starts = [
        e for e in pi.seen if e["type"] == "message_start" and e["message"]["role"] == "assistant"
    ]
    ends = [
        e for e in pi.seen if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    assert len(starts) == len(ends)
    assert (await pi.command("get_state"))["isStreaming"] is False
    assert await pi.command("abort") == {"aborted": False}


async def test_steer_while_idle_waits_for_the_next_prompt(
    pi: RpcClient, server: ScriptedServer
) -> None:
    """As in pi: queued while idle, taken by the next run (ink's own dialect would run it)."""
    queued = await pi.command("steer", message="answer in French")
    assert queued["disposition"] == "queued"
    state = await pi.command("get_state")
    assert state["isStreaming"] is False and state["pendingMessageCount"] == 1
    server.push(text_reply("Bonjour."))
    await pi.command("prompt", message="greet me")
    await pi.wait_settled()
    assert user_texts(server.requests[0]) == ["greet me", "answer in French"]
    assert await pi.command("get_last_assistant_text") == {"text": "Bonjour."}


async def test_fork_and_switch_session(pi: RpcClient, server: ScriptedServer) -> None:
    server.push(text_reply("One."), text_reply("Two."))
    await pi.command("prompt", message="first")
    await pi.wait_settled()
    await pi.command("prompt", message="second")
    await pi.wait_settled()
    state = await pi.command("get_state")
    forks = (await pi.command("get_fork_messages"))["messages"]
    assert [m["text"] for m in forks] == ["first", "second"]

    forked = await pi.command("fork", entryId=forks[1]["entryId"])
    assert forked["text"] == "second" and forked["cancelled"] is False
    after = await pi.command("get_state")
    assert after["sessionId"] == forked["sessionId"] != state["sessionId"]
    assert after["messageCount"] == 2

    back = await pi.command("switch_session", sessionPath=state["sessionFile"])
    assert back == {"cancelled": False, "sessionId": state["sessionId"]}
    assert (await pi.command("get_state"))["messageCount"] == 4
    stats = await pi.command("get_session_stats")
    assert (stats["userMessages"], stats["assistantMessages"]) == (2, 2)


async def test_model_and_unsupported_commands(pi: RpcClient) -> None:
    model = await pi.command("set_model", provider="ink", modelId="other-model")
    assert model["id"] == "other-model" and model["provider"] == "ink"
    assert (await pi.command("get_state"))["model"]["id"] == "other-model"
    with pytest.raises(RpcError, match="Model not found: openai/x"):
        await pi.command("set_model", provider="openai", modelId="x")
    assert await pi.command("get_available_thinking_levels") == {"levels": ["off"]}
    assert await pi.command("cycle_model") is None
    with pytest.raises(RpcError, match="not supported by ink: export_html"):
        await pi.command("export_html")
    with pytest.raises(RpcError, match="Unknown command: nope"):
        await pi.command("nope")
    await pi.command("set_steering_mode", mode="one-at-a-time")
    assert (await pi.command("get_state"))["steeringMode"] == "one-at-a-time"


async def test_a_retried_request_in_pis_fields(pi: RpcClient, server: ScriptedServer) -> None:
    server.push(error_reply(503, "overloaded", headers={"Retry-After": "0"}), text_reply("ok"))
    await pi.command("prompt", message="hi")
    await pi.wait_settled()
    start = next(e for e in pi.seen if e["type"] == "auto_retry_start")
    end = next(e for e in pi.seen if e["type"] == "auto_retry_end")
    # pi counts retries: the first is 1.
    assert start["attempt"] == 1 and "503" in start["errorMessage"]
    assert isinstance(start["delayMs"], int) and start["maxAttempts"] >= 1
    assert end == {"type": "auto_retry_end", "success": True, "attempt": 1}
    ends = [e["willRetry"] for e in pi.seen if e["type"] == "agent_end"]
    assert ends == [True, False]
    assert _types(pi.seen).count("agent_settled") == 1


async def test_a_sub_agents_calls_run_under_its_task_call(
    pi: RpcClient, server: ScriptedServer
) -> None:
    """pi has no sub-agents: their tool calls carry pi's parentToolCallId, their text
    and turns are not the main agent's, and subagent_start/_end are ink's additions."""
    sub_replies = [tool_reply([("ls", {}, "call_sub_ls")]), text_reply("Found it in src.")]

    def sub_agent(body: dict[str, Any]) -> Reply | None:
        first = user_texts(body)[:1]
        return sub_replies.pop(0) if first == ["find the file"] and sub_replies else None

    server.responders.append(sub_agent)
    task = {"description": "look", "prompt": "find the file"}
    server.push(tool_reply([("task", task, "call_task_1")]), text_reply("It is in src."))
    await pi.command("prompt", message="where is it?")
    await pi.wait_settled()

    seen = pi.seen
    started = next(e for e in seen if e["type"] == "subagent_start")
    assert started["agentId"] and started["parentToolCallId"] == "call_task_1"
    assert started["description"] == "look"
    ended = next(e for e in seen if e["type"] == "subagent_end")
    assert ended["stopReason"] == "completed" and "Found it in src." in ended["result"]
    nested = [
        e for e in seen if e["type"].startswith("tool_execution") and e.get("parentToolCallId")
    ]
    assert [(e["type"], e["toolName"]) for e in nested] == [
        ("tool_execution_start", "ls"),
        ("tool_execution_end", "ls"),
    ]
    texts = "".join(u.get("delta", "") for u in _inner(seen) if u["type"] == "text_delta")
    assert texts == "It is in src."
    assert _types(seen).count("agent_start") == 1 and _types(seen).count("agent_settled") == 1
    turn_ends = [e for e in seen if e["type"] == "turn_end"]
    assert [r["toolCallId"] for r in turn_ends[0]["toolResults"]] == ["call_task_1"]


async def test_compact_answers_pis_compaction_result(pi: RpcClient, server: ScriptedServer) -> None:
    server.push(text_reply("A long answer " * 50))
    await pi.command("prompt", message="tell me a lot " * 30)
    await pi.wait_settled()
    before = len(pi.seen)
    server.push(text_reply("Goal: short."))
    result = await pi.command("compact", customInstructions="keep the goal")
    assert result["summary"] == "Goal: short."
    assert result["tokensBefore"] > 0 and result["details"] == {"first": 0, "end": 1}
    assert "keep the goal" in json.dumps(server.requests[1])
    # A compaction is no prompt: its own events only, no agent_* and no settle.
    assert _types(pi.seen[before:]) == ["compaction_start", "compaction_end"]
    assert pi.seen[-1]["result"] == result and pi.seen[-1]["reason"] == "manual"
    messages = (await pi.command("get_messages"))["messages"]
    assert messages[0]["role"] == "compactionSummary"
    assert messages[0]["summary"].endswith("Goal: short.")


async def test_approvals_as_ink_additions(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    env = isolated_env(tmp_path)
    args = ("--rpc-dialect", "pi", "--approval", "ask")
    async with spawn_rpc(server, workspace, env, *args) as pi:
        server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("Not run."))
        await pi.command("prompt", message="make a file")
        asked = await pi.wait_for(lambda e: e["type"] == "approval_request")
        assert asked["toolName"] == "bash" and asked["args"] == {"command": "touch made"}
        assert asked["toolCallId"] == "call_0_bash" and "deny" in asked["decisions"]
        answer = await pi.command("approve", requestId=asked["requestId"], decision="deny")
        assert answer == {"requestId": asked["requestId"], "decision": "deny"}
        await pi.wait_settled()
        resolved = next(e for e in pi.seen if e["type"] == "approval_resolved")
        assert resolved["decision"] == "deny" and resolved["by"] == "user"
        end = next(e for e in pi.seen if e["type"] == "tool_execution_end")
        assert end["isError"] is True
        assert not (workspace / "made").exists()


async def test_a_shell_line_prompt_is_handled_without_a_run(pi: RpcClient) -> None:
    assert await pi.command("prompt", message="!echo from a shell line") == {
        "disposition": "handled"
    }
    update = await pi.wait_for(lambda e: e["type"] == "bash_execution_update")
    assert update["delta"] == "from a shell line"
    # ink's own queue_update/notice aside, nothing of a run: no agent or tool events.
    shown = set(_types(pi.seen)) - {"queue_update", "bash_execution_update"}
    assert not shown & {"agent_start", "agent_end", "tool_execution_start", "turn_start"}
    assert await pi.command("bash", command="echo after") == {
        "output": "after",
        "cancelled": False,
        "truncated": False,
        "exitCode": 0,
    }
