"""The public Python API (`AgentSession`) against the loopback scripted server.

Every rule of the run-control contract, seen from a program: settle, busy, steer and
follow-up delivery, abort, failure, retries, the queue, recording.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession, PromptResult, QueuedInput, QueueEntryGone, SessionBusy
from ink_tui.control.public_events import PUBLIC_EVENT_TYPES
from tests.process_markers import new_marker, wait_gone
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, error_reply, text_reply, tool_reply
from tests.serve_helpers import isolated_store


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = isolated_store(tmp_path, monkeypatch)
    return home


@pytest.fixture
async def session(
    server: ScriptedServer, workspace: Path, store: Path
) -> AsyncIterator[AgentSession]:
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="test-key"
    ) as opened:
        yield opened


class Events:
    def __init__(self, session: AgentSession) -> None:
        self.seen: list[dict[str, Any]] = []
        session.subscribe(self.seen.append)

    def types(self) -> list[str]:
        return [e["type"] for e in self.seen]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.seen if e["type"] == kind]

    async def wait(self, kind: str, within: float = 10.0) -> dict[str, Any]:
        async def scan() -> dict[str, Any]:
            while True:
                found = self.of(kind)
                if found:
                    return found[-1]
                await asyncio.sleep(0.01)

        return await asyncio.wait_for(scan(), within)


async def test_prompt_returns_once_settled_with_every_event_stamped(
    session: AgentSession, server: ScriptedServer
) -> None:
    events = Events(session)
    server.push(text_reply("Hello there"))
    result = await session.prompt("hi")
    assert result == PromptResult("completed")
    assert not session.is_busy
    types = events.types()
    assert types[0] == "state_change"
    assert "agent_start" in types and "message_end" in types
    assert types.count("agent_settled") == 1 and types[-1] == "agent_settled"
    assert all(t in PUBLIC_EVENT_TYPES for t in types)
    assert [e["seq"] for e in events.seen] == list(range(1, len(events.seen) + 1))
    assert {e["session_id"] for e in events.seen} == {session.session_id}
    assert {e["v"] for e in events.seen} == {1}
    text = "".join(e["delta"]["text"] for e in events.of("message_update"))
    assert text == "Hello there"
    assert events.of("agent_start")[0]["run_id"] == events.of("agent_end")[0]["run_id"]


async def test_busy_prompt_is_refused_unless_it_says_how_to_deliver(
    session: AgentSession, server: ScriptedServer
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("read", {"path": "README.md"})], gate=gate),
        text_reply("took the steer"),
    )
    running = session.start("look at the readme")
    await wait_gate(gate)
    with pytest.raises(SessionBusy):
        await session.prompt("a new task")
    queued = await session.prompt("use the sum function", deliver_as="steer")
    assert isinstance(queued, QueuedInput) and queued.mode == "steer"
    assert session.queue == [queued]
    gate.open()
    assert (await running).stop_reason == "completed"
    # The steer reached the very next model call, after the tool batch.
    second = server.requests[1]
    assert user_texts(second)[-1] == "use the sum function"
    assert second["messages"][-2]["role"] == "tool"


async def test_follow_ups_run_one_at_a_time_and_settle_once(
    session: AgentSession, server: ScriptedServer
) -> None:
    events = Events(session)
    gate = Gate()
    server.push(text_reply("first", gate=gate), text_reply("F1 done"), text_reply("F2 done"))
    running = session.start("go")
    await wait_gate(gate)
    session.follow_up("F1")
    session.follow_up("F2")
    gate.open()
    assert (await running).stop_reason == "completed"
    assert len(server.requests) == 3
    assert user_texts(server.requests[1])[-1] == "F1"
    assert user_texts(server.requests[2])[-1] == "F2"
    assert len(events.of("agent_settled")) == 1
    assert [e["kind"] for e in events.of("user_message")] == ["prompt", "follow_up", "follow_up"]


async def test_the_seeds_four_messages_in_contract_order(
    session: AgentSession, server: ScriptedServer
) -> None:
    gate = Gate()
    server.push(
        text_reply("streaming", gate=gate),
        text_reply("after steers"),
        text_reply("after F1"),
        text_reply("after F3"),
    )
    running = session.start("go")
    await wait_gate(gate)
    session.follow_up("F1")
    session.steer("S2")
    session.follow_up("F3")
    session.steer("S4")
    gate.open()
    await running
    assert [user_texts(r)[-2:] for r in server.requests[1:]] == [
        ["S2", "S4"],
        ["S4", "F1"],
        ["F1", "F3"],
    ]


async def test_abort_during_a_stream_settles_and_hands_back_the_queue(
    session: AgentSession, server: ScriptedServer
) -> None:
    events = Events(session)
    gate = Gate()
    server.push(text_reply("partial answer", gate=gate))
    running = session.start("go")
    await wait_gate(gate)
    await events.wait("message_update")
    session.steer("S1")
    session.follow_up("F1")
    result = await session.abort()
    assert result is not None and result.stop_reason == "aborted"
    assert result.restored_text == "S1\n\nF1" and result.restored_count == 2
    assert await running == result
    assert await asyncio.to_thread(server.disconnected.wait, 2)
    assert not session.is_busy and session.queue == []
    assert events.of("input_restored")[0]["text"] == "S1\n\nF1"
    assert len(events.of("agent_settled")) == 1
    # Aborting again (nothing running) is harmless and never exits.
    assert await session.abort() is None
    assert session.controller.state == "idle"


async def test_abort_during_bash_kills_the_command(
    session: AgentSession, server: ScriptedServer, workspace: Path
) -> None:
    events = Events(session)
    marker = new_marker()  # unique to this run: suites may run side by side
    server.push(tool_reply([("bash", {"command": f"sleep {marker}"})]))
    running = session.start("run it")
    await events.wait("tool_execution_start")
    await asyncio.sleep(0.2)
    result = await session.abort()
    assert result is not None and result.stop_reason == "aborted"
    assert await running == result
    end = events.of("tool_execution_end")[0]
    assert end["is_error"]
    assert not wait_gone([marker])


async def test_clear_queue_before_abort_leaves_nothing_to_restore(
    session: AgentSession, server: ScriptedServer
) -> None:
    events = Events(session)
    gate = Gate()
    server.push(text_reply("long", gate=gate))
    session.start("go")
    await wait_gate(gate)
    session.steer("S1")
    session.follow_up("F1")
    cleared = session.clear_queue()
    assert [(e.text, e.mode) for e in cleared] == [("S1", "steer"), ("F1", "follow_up")]
    result = await session.abort()
    assert result is not None and result.restored_text is None and result.restored_count == 0
    assert events.of("input_restored") == []


async def test_a_failed_run_restores_queued_input(
    session: AgentSession, server: ScriptedServer
) -> None:
    events = Events(session)
    gate = Gate()
    server.push(tool_reply([("read", {"path": "README.md"})], gate=gate))
    server.push(error_reply(400, "bad request: context too long"))
    running = session.start("go")
    await wait_gate(gate)
    session.follow_up("F1")
    gate.open()
    result = await running
    assert result.stop_reason == "failed"
    assert result.error is not None and "context too long" in result.error
    assert result.restored_text == "F1"
    assert events.of("error") and "context too long" in events.of("error")[0]["message"]


async def test_a_retried_503_ends_twice_and_settles_once(
    session: AgentSession, server: ScriptedServer
) -> None:
    events = Events(session)
    server.push(error_reply(503, "overloaded", headers={"Retry-After": "0"}), text_reply("ok"))
    result = await session.prompt("go")
    assert result.stop_reason == "completed"
    ends = events.of("agent_end")
    assert [e["will_retry"] for e in ends] == [True, False]
    assert len(events.of("agent_settled")) == 1
    assert len(events.of("agent_start")) == 1
    retry_start, retry_end = events.of("auto_retry_start")[0], events.of("auto_retry_end")[0]
    assert retry_start["attempt"] == 2 and "503" in retry_start["reason"]
    assert retry_end["success"] is True
    order = events.types()
    assert order.index("auto_retry_start") < order.index("auto_retry_end")


async def test_queue_entries_are_edited_moved_remoded_and_removed_by_id(
    session: AgentSession, server: ScriptedServer
) -> None:
    events = Events(session)
    gate = Gate()
    server.push(text_reply("long", gate=gate), text_reply("after"))
    running = session.start("go")
    await wait_gate(gate)
    a = session.steer("A")
    b = session.follow_up("B")
    assert a is not None and b is not None
    session.edit(a.id, "A edited")
    session.set_mode(b.id, "steer")
    session.move(b.id, 0)
    assert [(e.text, e.mode) for e in session.queue] == [("B", "steer"), ("A edited", "steer")]
    assert session.remove(a.id).text == "A edited"
    with pytest.raises(QueueEntryGone):
        session.edit(a.id, "gone")
    with pytest.raises(QueueEntryGone):
        session.remove(999)
    last = events.of("queue_update")[-1]
    assert [(e["id"], e["text"], e["mode"], e["shell"]) for e in last["entries"]] == [
        (b.id, "B", "steer", False)
    ]
    gate.open()
    await running
    assert user_texts(server.requests[1])[-1] == "B"


async def test_events_iterator_ends_when_the_session_closes(
    server: ScriptedServer, workspace: Path, store: Path
) -> None:
    session = await AgentSession.open(
        workspace, base_url=server.base_url, model="m", api_key="k", record=False
    )
    seen: list[str] = []

    async def read() -> None:
        async for event in session.events():
            seen.append(event["type"])

    reader = asyncio.ensure_future(read())
    await asyncio.sleep(0)
    server.push(text_reply("hi"))
    await session.prompt("go")
    await session.aclose()
    await asyncio.wait_for(reader, 5)
    assert seen[-1] == "agent_settled"
    assert session.session_file is None


async def test_a_session_is_recorded_and_resumed_with_its_history(
    server: ScriptedServer, workspace: Path, store: Path
) -> None:
    server.push(text_reply("first answer"), text_reply("second answer"))
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="m", api_key="k"
    ) as first:
        await first.prompt("remember 42")
        session_id, path = first.session_id, first.session_file
    assert path is not None and path.exists()
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="m", api_key="k", continue_=True
    ) as again:
        assert again.session_id == session_id
        await again.prompt("what was it?")
    assert user_texts(server.requests[1]) == ["remember 42", "what was it?"]
    from ink_tui.session.session_reader import load_session

    assert load_session(path).message_count == 4


async def test_an_unknown_session_id_is_an_error(workspace: Path, store: Path) -> None:
    from ink_tui.session.catalog import SessionLookupError

    with pytest.raises(SessionLookupError):
        await AgentSession.open(workspace, resume="nope")
