"""`ink acp` and sub-agents: a `task` call is a tool call whose content shows its
sub-agent's progress; the sub-agent's own tool calls are tool calls of their own with a
`_meta.ink` pointer to the task call, and its text never mixes into the answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.helpers import text_block

from tests.acp_client import spawn_acp
from tests.rpc_process import isolated_env
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.test_subagents_rpc import answer_subagents, task


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


async def test_a_task_call_nests_its_subagents_calls(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    sub_prompt = "Find where total() is defined and report the file."
    answer_subagents(
        server,
        {
            sub_prompt: [
                tool_reply([("grep", {"pattern": "def total"})]),
                text_reply("total() is defined in sum.py"),
            ]
        },
    )
    server.push(
        tool_reply([task("find total", sub_prompt, "call_task_1")]),
        text_reply("It is in sum.py."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        answer = await acp.conn.prompt(session_id=session, prompt=[text_block("where?")])
        assert answer.stop_reason == "end_turn"
        client = acp.client
        # Only the top-level agent's words are the answer.
        assert client.text() == "It is in sum.py."
        starts = {u.tool_call_id: u for u in client.of("tool_call")}
        assert starts["call_task_1"].kind == "think"
        assert starts["call_task_1"].title == "Task: find total"
        (grep_id,) = [i for i in starts if i != "call_task_1"]
        assert grep_id.startswith("agent-") and grep_id.endswith("/call_0_grep")
        grep = starts[grep_id]
        assert grep.kind == "search"
        assert grep.field_meta == {
            "ink": {"agentId": grep_id.split("/")[0], "parentToolCallId": "call_task_1"}
        }
        grep_end = [u for u in client.of("tool_call_update") if u.tool_call_id == grep_id]
        assert grep_end[-1].status == "completed"
        task_updates = [u for u in client.of("tool_call_update") if u.tool_call_id == "call_task_1"]
        progress = [u.content[0].content.text for u in task_updates if u.content]
        assert any("started: find total" in p for p in progress)
        assert any("Grep def total" in p for p in progress)
        final = task_updates[-1]
        assert final.status == "completed"
        shown = [c.content.text for c in final.content]
        assert "completed" in shown[0] and shown[-1] == "total() is defined in sum.py"


async def test_a_subagents_permission_question_is_about_its_own_call(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    sub_prompt = "Create the marker file."
    answer_subagents(
        server,
        {
            sub_prompt: [
                tool_reply([("bash", {"command": "touch sub.txt"})]),
                text_reply("I was not allowed to."),
            ]
        },
    )
    server.push(
        tool_reply([task("make marker", sub_prompt, "call_task_1")]),
        text_reply("The sub-agent could not."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        acp.client.answer = lambda question: "deny"
        session = await acp.start(workspace)
        answer = await acp.conn.prompt(session_id=session, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"
        (question,) = acp.client.questions
        agent, _, call = question.tool_call.tool_call_id.partition("/")
        assert agent.startswith("agent-") and call == "call_0_bash"
    assert not (workspace / "sub.txt").exists()
