"""Extensions' messages against the loopback server, through `AgentSession`: each
`deliver_as` while running and while idle, with and without `trigger_turn`; next_turn
joining the next prompt; the marking the model and the session file see."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession
from ink_tui.session.session_reader import load_session
from tests.extension_helpers import PROBE, inject_spec, marked, user_messages, write_extension
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    write_extension(tmp_path / "config" / "ink" / "extensions", "probe", PROBE)
    return tmp_path / "config"


@pytest.fixture
async def session(
    server: ScriptedServer, workspace: Path, config_home: Path
) -> AsyncIterator[AgentSession]:
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="test-key"
    ) as opened:
        assert opened.extensions is not None and list(opened.extensions.loaded) == ["probe"]
        yield opened


class Seen:
    def __init__(self, session: AgentSession) -> None:
        self.events: list[dict[str, Any]] = []
        session.subscribe(self.events.append)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def inject(session: AgentSession, content: str, deliver_as: str, trigger: bool = False) -> None:
    assert session.run_command("inject", inject_spec(content, deliver_as, trigger=trigger))


async def held_run(session: AgentSession, server: ScriptedServer, *later: Any) -> Gate:
    """Start a run whose first reply the server holds; `later` replies follow."""
    gate = Gate()
    server.push(text_reply("working", gate=gate), *later)
    session.start("do the work")
    await wait_gate(gate)
    return gate


@pytest.mark.parametrize("deliver_as", ["steer", "follow_up"])
@pytest.mark.parametrize("trigger", [False, True])
async def test_while_running_steer_and_follow_up_join_the_queue_marked_as_the_extensions(
    session: AgentSession, server: ScriptedServer, deliver_as: str, trigger: bool
) -> None:
    seen = Seen(session)
    gate = await held_run(session, server, text_reply("noted"))
    inject(session, "the API is frozen", deliver_as, trigger)
    [entry] = session.queue
    assert (entry.text, entry.mode, entry.source) == ("the API is frozen", deliver_as, "probe")
    published = seen.of("queue_update")[-1]["entries"]
    assert published[0]["source"] == "probe" and published[0]["custom_type"] == "fact"
    gate.open()
    result = await session.wait_settled()
    assert result is not None and result.stop_reason == "completed"
    # One run: the message joined it (trigger_turn changes nothing while running).
    assert len(server.requests) == 2
    assert user_messages(server.requests[1]) == [
        "do the work",
        marked("probe", "fact", "the API is frozen"),
    ]
    [injected] = [e for e in seen.of("user_message") if e["source"] == "probe"]
    assert injected["kind"] == deliver_as and injected["custom_type"] == "fact"


@pytest.mark.parametrize("trigger", [False, True])
async def test_next_turn_waits_for_the_next_prompt_and_goes_in_before_it(
    session: AgentSession, server: ScriptedServer, trigger: bool
) -> None:
    gate = await held_run(session, server)
    inject(session, "the user prefers tabs", "next_turn", trigger)
    assert session.queue == []
    gate.open()
    await session.wait_settled()
    assert len(server.requests) == 1  # not part of the running prompt
    server.push(text_reply("ok"))
    await session.prompt("format the file")
    assert user_messages(server.requests[1])[-2:] == [
        marked("probe", "fact", "the user prefers tabs"),
        "format the file",
    ]


async def test_next_turn_while_idle_waits_too_even_with_trigger_turn(
    session: AgentSession, server: ScriptedServer
) -> None:
    inject(session, "remember the deadline", "next_turn", trigger=True)
    await asyncio.sleep(0.1)
    assert not session.is_busy and server.requests == []
    server.push(text_reply("ok"))
    await session.prompt("plan the week")
    assert user_messages(server.requests[0]) == [
        marked("probe", "fact", "remember the deadline"),
        "plan the week",
    ]


@pytest.mark.parametrize("deliver_as", ["steer", "follow_up"])
async def test_idle_without_trigger_turn_only_records_the_message(
    session: AgentSession, server: ScriptedServer, deliver_as: str
) -> None:
    seen = Seen(session)
    inject(session, "tests live in tests/", deliver_as)
    await asyncio.sleep(0.1)
    assert not session.is_busy and server.requests == []
    assert session.messages[-1] == {
        "role": "user",
        "kind": deliver_as,
        "content": "tests live in tests/",
        "source": "probe",
        "custom_type": "fact",
        # Recorded like any message: a rewind can name it.
        "entry_id": seen.of("user_message")[-1]["entry_id"],
    }
    assert seen.of("user_message")[-1]["source"] == "probe"
    server.push(text_reply("ok"))
    await session.prompt("add a test")
    assert user_messages(server.requests[0]) == [
        marked("probe", "fact", "tests live in tests/"),
        "add a test",
    ]


@pytest.mark.parametrize("deliver_as", ["steer", "follow_up"])
async def test_idle_with_trigger_turn_starts_a_run_with_the_message(
    session: AgentSession, server: ScriptedServer, deliver_as: str
) -> None:
    seen = Seen(session)
    server.push(text_reply("on it"))
    inject(session, "the nightly build failed", deliver_as, trigger=True)
    assert session.is_busy
    result = await session.wait_settled()
    assert result is not None and result.stop_reason == "completed"
    assert user_messages(server.requests[0]) == [
        marked("probe", "fact", "the nightly build failed")
    ]
    assert seen.of("agent_settled")


async def test_the_session_file_keeps_the_marking_for_a_resume(
    session: AgentSession, server: ScriptedServer
) -> None:
    server.push(text_reply("on it"))
    inject(session, "deploy is at 5pm", "steer", trigger=True)
    await session.wait_settled()
    path = session.session_file
    assert path is not None
    await asyncio.to_thread(session._writer.drain)  # type: ignore[union-attr]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    [user] = [line for line in lines if line["type"] == "user"]
    assert user["source"] == "probe" and user["custom_type"] == "fact"
    history = load_session(path).history
    assert history[0].model_text() == marked("probe", "fact", "deploy is at 5pm")


async def test_an_aborted_run_restores_the_users_entries_and_drops_the_extensions(
    session: AgentSession, server: ScriptedServer
) -> None:
    seen = Seen(session)
    await held_run(session, server)
    session.steer("mine")
    inject(session, "theirs", "follow_up")
    result = await session.abort()
    assert result is not None and result.restored_text == "mine"
    assert any(
        "Dropped 1 queued message from extension 'probe'" in e["text"] for e in seen.of("notice")
    )
