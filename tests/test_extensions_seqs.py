"""An extension's handlers get the session's own public events: the seqs RPC and
`ink serve` clients see, counted from the session's start (and across a reopen), not
from when the first handler was registered."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession
from ink_tui.extensions.api import Ink
from tests.extension_helpers import PROBE, write_extension
from tests.scripted_server import ScriptedServer, text_reply

KINDS = ("agent_start", "turn_start", "message_update", "message_end", "agent_end")


@pytest.fixture
async def session(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[AgentSession]:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    write_extension(tmp_path / "config" / "ink" / "extensions", "probe", PROBE)
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="test-key"
    ) as opened:
        assert opened.extensions is not None
        yield opened


async def test_handlers_see_the_seqs_the_sessions_subscribers_see(
    session: AgentSession, server: ScriptedServer, workspace: Path
) -> None:
    clients: list[dict[str, Any]] = []
    session.subscribe(clients.append)
    # Events before any handler exists: the session numbers them all the same.
    server.push(text_reply("first"))
    await session.prompt("one")
    assert session.extensions is not None
    handled: list[dict[str, Any]] = []
    settled = asyncio.get_running_loop().create_future()
    ink = Ink(session.extensions, "probe", workspace / "probe.py")
    for kind in KINDS:
        ink.on(kind, handled.append)
    ink.on("agent_settled", settled.set_result)
    mark = len(clients)
    server.push(text_reply("second"))
    await session.prompt("two")
    last = await asyncio.wait_for(settled, 10)

    expected = [(e["type"], e["seq"]) for e in clients[mark:] if e["type"] in KINDS]
    assert [kind for kind, _ in expected[:2]] == ["agent_start", "turn_start"]
    assert [(e["type"], e["seq"]) for e in handled] == expected
    (client_settled,) = [e for e in clients[mark:] if e["type"] == "agent_settled"]
    assert last == client_settled
