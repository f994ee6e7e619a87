"""`AgentSession.recorded_subagents()`: a session whose run used sub-agents, closed and
opened again, gives back each sub-agent's whole conversation from its file (the parent's
history has only the task calls and their results), a nested one naming its parent."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession, PromptResult, SyncAgentSession
from tests.run_helpers import user_texts
from tests.scripted_server import Reply, ScriptedServer, text_reply, tool_reply


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    # A sub-agent may start one of its own: the record must say whose it is.
    (config / "ink").mkdir(parents=True)
    (config / "ink" / "config.toml").write_text("[subagents]\nmax_depth = 2\n")
    return home


def answer_by_prompt(server: ScriptedServer, replies: dict[str, list[Reply]]) -> None:
    queues = {prompt: deque(list_) for prompt, list_ in replies.items()}

    def respond(body: dict[str, Any]) -> Reply | None:
        texts = user_texts(body)
        queue = queues.get(texts[0]) if texts else None
        return queue.popleft() if queue else None

    server.responders.append(respond)


def options(server: ScriptedServer) -> dict[str, Any]:
    return {"base_url": server.base_url, "model": "scripted-model", "api_key": "test-key"}


async def test_a_reopened_session_gives_back_its_subagents_conversations(
    server: ScriptedServer, workspace: Path
) -> None:
    answer_by_prompt(
        server,
        {
            "SUB-A": [
                tool_reply([("read", {"path": "README.md"}, "call_read")], text="Reading it."),
                tool_reply([("task", {"description": "go deeper", "prompt": "SUB-B"}, "call_b")]),
                text_reply("A found **the sample**"),
            ],
            "SUB-B": [text_reply("B looked deeper")],
        },
    )
    server.push(
        tool_reply([("task", {"description": "look around", "prompt": "SUB-A"}, "call_a")]),
        text_reply("All done."),
    )
    async with AgentSession.open(workspace, **options(server)) as session:
        assert session.recorded_subagents() == []
        assert await session.prompt("go") == PromptResult("completed")
        session_id = session.session_id

    async with AgentSession.open(workspace, resume=session_id, **options(server)) as reopened:
        recorded = reopened.recorded_subagents()
        parent = reopened.messages

    # In the order they ended: B (A's own) first, then A.
    deep, outer = recorded
    assert outer["agent_id"] == "agent-1" and deep["agent_id"] == "agent-2"
    assert outer["description"] == "look around" and outer["parent_call_id"] == "call_a"
    assert outer["parent_agent_id"] is None
    assert deep["parent_call_id"] == "call_b" and deep["parent_agent_id"] == "agent-1"
    assert outer["stop_reason"] == deep["stop_reason"] == "completed"
    assert outer["turns"] == 3 and deep["turns"] == 1
    assert outer["usage"]["input_tokens"] > 0 and outer["usage"]["output_tokens"] > 0

    roles = [m["role"] for m in outer["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    prompt, reading, read, asking, deeper, answer = outer["messages"]
    assert prompt == {"role": "user", "kind": "prompt", "content": "SUB-A"}
    assert reading["role"] == "assistant" and reading["text"] == "Reading it."
    assert reading["tool_calls"] == [
        {"id": "call_read", "name": "read", "arguments": {"path": "README.md"}}
    ]
    assert read["role"] == "tool" and read["call_id"] == "call_read"
    assert "A tiny project for tests." in read["content"] and not read["is_error"]
    assert asking["role"] == "assistant" and asking["tool_calls"][0]["id"] == "call_b"
    assert deeper["role"] == "tool" and deeper["content"] == "B looked deeper"
    assert answer["role"] == "assistant" and answer["text"] == "A found **the sample**"
    assert [m["role"] for m in deep["messages"]] == ["user", "assistant"]
    assert deep["messages"][1]["role"] == "assistant"
    assert deep["messages"][1]["text"] == "B looked deeper"

    # The parent's history is its own: the task call and its result, none of theirs.
    assert "SUB-B" not in str(parent) and "Reading it." not in str(parent)
    results = [m for m in parent if m["role"] == "tool"]
    assert [(m["call_id"], m["content"]) for m in results] == [("call_a", "A found **the sample**")]


def test_what_it_returns_is_a_copy_also_from_the_sync_session(
    server: ScriptedServer, workspace: Path
) -> None:
    answer_by_prompt(server, {"SUB": [text_reply("sub words")]})
    server.push(
        tool_reply([("task", {"description": "one", "prompt": "SUB"}, "call_1")]),
        text_reply("done"),
    )
    with SyncAgentSession.open(workspace, **options(server)) as session:
        assert session.prompt("go") == PromptResult("completed")
        session_id = session.session_id
    with SyncAgentSession.open(workspace, resume=session_id, **options(server)) as reopened:
        (recorded,) = reopened.recorded_subagents()
        recorded["messages"].clear()
        (again,) = reopened.recorded_subagents()
    assert again["description"] == "one" and again["parent_call_id"] == "call_1"
    assert [m["role"] for m in again["messages"]] == ["user", "assistant"]
    assert again["messages"][-1]["role"] == "assistant"
    assert again["messages"][-1]["text"] == "sub words"
