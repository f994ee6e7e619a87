"""`GET /api/sessions/{id}` of a session `ink serve` opened from its file: `subagents`
holds the sub-agents of its earlier runs (`recorded`, their conversations as
`messages`), masked and reduced like everything else, and a sub-agent of the new run
beside them even when its id is one an earlier run used."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.run_helpers import user_texts
from tests.scripted_server import Reply, ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import Served, isolated_store, serve

ENV_SECRET = "supersecret123"
API_KEY = "sk-configured-abcdef123456"
COMMAND = f"echo {ENV_SECRET}"


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
    monkeypatch.setenv("FOO_TOKEN", ENV_SECRET)
    yield home


def answer_by_prompt(server: ScriptedServer, replies: dict[str, list[Reply]]) -> None:
    queues = {prompt: deque(list_) for prompt, list_ in replies.items()}

    def respond(body: dict[str, Any]) -> Reply | None:
        texts = user_texts(body)
        queue = queues.get(texts[0]) if texts else None
        return queue.popleft() if queue else None

    server.responders.append(respond)


def task(description: str, prompt: str, call_id: str) -> tuple[str, dict[str, Any], str]:
    return ("task", {"description": description, "prompt": prompt}, call_id)


async def run_and_reopen(srv: Served, first: str) -> tuple[str, dict[str, Any]]:
    """Run `first` in a new session, close it, open it again from its file: its GET."""
    sid = await srv.new_session()
    sent = await srv.client.post(f"/api/sessions/{sid}/messages", json={"text": first})
    assert sent.status_code == 202, sent.text
    await srv.wait_idle(sid)
    closed = await srv.client.delete(f"/api/sessions/{sid}")
    assert closed.status_code == 200, closed.text
    reopened = await srv.client.post("/api/sessions", json={"resume": sid})
    assert reopened.status_code == 201, reopened.text
    shown = await srv.client.get(f"/api/sessions/{sid}")
    assert shown.status_code == 200, shown.text
    assert ENV_SECRET not in shown.text and API_KEY not in shown.text
    return sid, shown.json()


def script(server: ScriptedServer) -> None:
    answer_by_prompt(
        server,
        {
            f"SUB with {ENV_SECRET}": [
                tool_reply([("bash", {"command": COMMAND}, "call_bash")], text="Running it."),
                text_reply(f"The key is {API_KEY}, **noted**"),
            ]
        },
    )
    server.push(
        tool_reply([task(f"check {ENV_SECRET}", f"SUB with {ENV_SECRET}", "call_a")]),
        text_reply("Parent done."),
    )


@pytest.mark.parametrize("show_arguments", [False, True])
async def test_a_reopened_session_shows_its_recorded_subagents_masked(
    server: ScriptedServer, workspace: Path, show_arguments: bool
) -> None:
    script(server)
    async with serve(server, workspace, api_key=API_KEY, show_arguments=show_arguments) as srv:
        _, shown = await run_and_reopen(srv, "go")

    (agent,) = shown["subagents"]
    assert agent["recorded"] is True and agent["running"] is False
    assert agent["agent_id"] == "agent-1" and agent["parent_call_id"] == "call_a"
    assert agent["parent_agent_id"] is None
    assert agent["description"] == "check ***"
    assert agent["stop_reason"] == "completed" and agent["turns"] == 2
    assert agent["start"] is None and agent["end"] is None and agent["events"] == []
    prompt, running, result, answer = agent["messages"]
    assert prompt == {"role": "user", "kind": "prompt", "content": "SUB with ***"}
    assert running["text"] == "Running it."
    (call,) = running["tool_calls"]
    assert call["id"] == "call_bash" and call["name"] == "bash"
    # The sub-agent's tool arguments follow --show-tool-arguments, as the parent's do.
    assert call["arguments"] == ({"command": "echo ***"} if show_arguments else {})
    assert result["role"] == "tool" and result["content"].splitlines()[0] == "***"
    assert answer["text"] == "The key is ***, **noted**"
    # The parent's task row is drawn from its history, as before.
    task_calls = [c for m in shown["messages"] for c in m.get("tool_calls") or []]
    assert [c["id"] for c in task_calls] == ["call_a"]


async def test_a_subagent_of_the_new_run_is_listed_beside_a_recorded_one_of_the_same_id(
    server: ScriptedServer, workspace: Path
) -> None:
    answer_by_prompt(
        server, {"SUB-OLD": [text_reply("old words")], "SUB-NEW": [text_reply("new words")]}
    )
    server.push(
        tool_reply([task("old one", "SUB-OLD", "call_old")]),
        text_reply("first done"),
        tool_reply([task("new one", "SUB-NEW", "call_new")]),
        text_reply("second done"),
    )
    async with serve(server, workspace) as srv:
        sid, shown = await run_and_reopen(srv, "first")
        assert [a["description"] for a in shown["subagents"]] == ["old one"]
        sent = await srv.client.post(f"/api/sessions/{sid}/messages", json={"text": "second"})
        assert sent.status_code == 202, sent.text
        await srv.wait_idle(sid)
        after = (await srv.client.get(f"/api/sessions/{sid}")).json()["subagents"]

    old, new = after
    # Ids count from 1 in each process that opens the session: both are agent-1.
    assert old["agent_id"] == new["agent_id"] == "agent-1"
    assert (old["recorded"], old["parent_call_id"]) == (True, "call_old")
    assert old["messages"][-1]["text"] == "old words"
    assert (new["recorded"], new["parent_call_id"]) == (False, "call_new")
    assert new["end"]["stop_reason"] == "completed" and "messages" not in new
    assert "new words" in str(new["events"]) and "old words" not in str(new["events"])
