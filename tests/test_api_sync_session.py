"""`SyncAgentSession`: the API for code without an event loop, on a loop of its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink_tui import PromptResult, SessionBusy, SyncAgentSession
from tests.run_helpers import user_texts
from tests.scripted_server import Gate, ScriptedServer, text_reply


@pytest.fixture
def session(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SyncAgentSession]:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    with SyncAgentSession.open(
        workspace, base_url=server.base_url, model="m", api_key="k"
    ) as opened:
        yield opened


def test_prompt_blocks_until_settled(session: SyncAgentSession, server: ScriptedServer) -> None:
    seen: list[str] = []
    session.subscribe(lambda event: seen.append(event["type"]))
    server.push(text_reply("plain and simple"))
    assert session.prompt("hi") == PromptResult("completed")
    assert seen[-1] == "agent_settled"
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert session.session_file is not None and session.session_file.exists()


def test_busy_rules_steering_and_abort_from_plain_threads(
    session: SyncAgentSession, server: ScriptedServer
) -> None:
    gate = Gate()
    server.push(text_reply("long", gate=gate), text_reply("steered"))
    running = session.start("go")
    assert gate.reached.wait(10)
    with pytest.raises(SessionBusy):
        session.prompt("another")
    queued = session.steer("be brief")
    assert queued is not None and session.queue == [queued]
    gate.open()
    assert running.result(10).stop_reason == "completed"
    assert user_texts(server.requests[1])[-1] == "be brief"

    gate2 = Gate()
    server.push(text_reply("never", gate=gate2))
    session.start("again")
    assert gate2.reached.wait(10)
    session.follow_up("later")
    result = session.abort()
    assert result is not None and result.restored_text == "later"


def test_events_are_handed_to_the_callers_thread(
    session: SyncAgentSession, server: ScriptedServer
) -> None:
    server.push(text_reply("streamed"))
    threads: set[str] = set()
    types: list[str] = []
    events = session.events()
    running = session.start("go")
    for event in events:
        threads.add(threading.current_thread().name)
        types.append(event["type"])
        if event["type"] == "agent_settled":
            break
    running.result(10)
    assert threads == {threading.current_thread().name}
    assert "message_update" in types
