"""`ink serve`'s sub-agent routes against a real uvicorn and the scripted model: list the
running sub-agents, steer one, stop one (the run goes on), and a gone one is 404."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, Reply, ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import isolated_store, serve


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
    yield home


async def test_a_subagent_is_listed_steered_and_stopped_while_the_run_goes_on(
    server: ScriptedServer, workspace: Path
) -> None:
    first, second = Gate(), Gate()
    replies = [text_reply("looked once", gate=first), text_reply("never finished", gate=second)]

    def respond(body: dict[str, Any]) -> Reply | None:
        texts = user_texts(body)
        return replies.pop(0) if texts and texts[0] == "SUB" and replies else None

    server.responders.append(respond)
    call = ("task", {"description": "look around", "prompt": "SUB"}, "call_t")
    server.push(tool_reply([call]), text_reply("parent goes on"))
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        base = f"/api/sessions/{sid}"
        await srv.client.post(f"{base}/messages", json={"text": "go"})
        await wait_gate(first)
        (agent,) = (await srv.client.get(f"{base}/agents")).json()["agents"]
        assert agent["description"] == "look around" and agent["parent_call_id"] == "call_t"
        agent_id = agent["agent_id"]
        steer = await srv.client.post(
            f"{base}/agents/{agent_id}/messages", json={"text": "STEER-SUB"}
        )
        assert steer.status_code == 202 and steer.json()["queued"]["mode"] == "steer"
        missing = await srv.client.post(f"{base}/agents/agent-99/abort")
        assert missing.status_code == 404 and missing.json()["error"] == "gone"
        first.open()
        await wait_gate(second)
        stopped = await srv.client.post(f"{base}/agents/{agent_id}/abort")
        assert stopped.status_code == 200, stopped.text
        assert stopped.json()["stop_reason"] == "stopped"
        state = await srv.wait_idle(sid)
        gone = await srv.client.post(
            f"{base}/agents/{agent_id}/messages", json={"text": "late", "deliver_as": "follow_up"}
        )
        assert gone.status_code == 404 and "already ended" in gone.json()["message"]
    assert state["queue"] == []
    sub_requests = [r for r in server.requests if user_texts(r)[:1] == ["SUB"]]
    assert user_texts(sub_requests[-1]) == ["SUB", "STEER-SUB"]
    tool = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool[0]["content"].startswith("Stopped by the user")
