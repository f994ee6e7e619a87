"""The demo's sub-agent through the real process: `ink --mode rpc` with no model configured
runs the offline demo, whose tour starts a sub-agent ("Survey the tests"). Its events
carry its `agent_id`, its `find` and `grep` ran on the workspace, and the parent's next
reply uses the count its answer gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ink_tui.rpc_client import RpcClient
from tests.rpc_process import isolated_env
from tests.test_demo_subagent import make_tests

# The demo streams at a human pace (some 400 characters a second) and its sub-agent
# thinks 3.5 s before each of its three steps: about twenty seconds to the reply after
# the sub-agent's, more on a busy machine.
WITHIN = 90.0


def is_type(kind: str, agent_id: str | None = None) -> Any:
    return lambda e: e["type"] == kind and e.get("agent_id") == agent_id


async def test_the_demo_tour_runs_a_sub_agent_with_real_tools(
    workspace: Path, tmp_path: Path
) -> None:
    named = make_tests(workspace)
    env = isolated_env(tmp_path)
    async with RpcClient.spawn(["--approval", "auto"], cwd=workspace, env=env) as ink:
        await ink.command("prompt", message="explain the tokenizer")
        start = await ink.wait_for(lambda e: e["type"] == "subagent_start", within=WITHIN)
        agent_id = start["agent_id"]
        assert isinstance(agent_id, str) and start["description"] == "Survey the tests"
        end = await ink.wait_for(is_type("subagent_end", agent_id), within=WITHIN)
        after = ink.seen.index(end)
        report = await ink.wait_for(is_type("message_end"), after=after, within=WITHIN)
        # The tour goes on to its changes; they are not what this test is about.
        await ink.command("abort")
        await ink.wait_settled(within=WITHIN)
        events = ink.seen

    assert end["stop_reason"] == "completed"
    assert end["parent_call_id"] == start["parent_call_id"]
    assert f"**{len(named)} test files**" in end["result"]
    assert f"So this workspace has {len(named)} test files." in report["message"]["text"]
    # The sub-agent's calls ran for real, in the workspace, read-only.
    mine = [e for e in events if is_type("tool_execution_end", agent_id)(e)]
    assert [e["tool_name"] for e in mine] == ["find", "grep"]
    assert not any(e["is_error"] for e in mine)
    assert all(path in mine[0]["content"] for path in named)
    # Every event between its start and end is its own or the parent's, told apart.
    own = [e for e in events if e.get("agent_id") == agent_id]
    assert own[0]["type"] == "subagent_start" and own[-1]["type"] == "subagent_end"
    assert all(e["parent_call_id"] == start["parent_call_id"] for e in own)
    # The parent's `task` call returned the sub-agent's answer.
    (task,) = [e for e in events if is_type("tool_execution_end")(e) and e["tool_name"] == "task"]
    assert task["call_id"] == start["parent_call_id"] and task["content"] == end["result"]
    # Nothing of the sub-agent's own text is the parent's.
    parent_text = "".join(
        e["delta"]["text"]
        for e in events
        if is_type("message_update")(e) and e["delta"]["type"] == "text"
    )
    assert "I'm a sub-agent" not in parent_text and "My sub-agent is back" in parent_text
