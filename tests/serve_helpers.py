"""Helpers for `ink serve` tests: a real uvicorn on a loopback port, in the test's loop,
an httpx client holding the token, and an SSE reader."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from ink_tui.serve.app import build_app
from ink_tui.serve.auth import new_token
from ink_tui.serve.events_stream import BUFFER_CAPACITY
from ink_tui.serve.main import http_implementation
from ink_tui.serve.redact import Redactor, env_secrets
from ink_tui.serve.sessions import SessionRegistry
from tests.scripted_server import ScriptedServer

API_KEY = "test-key-0123456789"


def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session store and config of the test's own, and no model from the environment:
    the data folder (where sessions are written)."""
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return home


@dataclass
class Served:
    base: str
    token: str
    client: httpx.AsyncClient
    registry: SessionRegistry

    async def new_session(self) -> str:
        response = await self.client.post("/api/sessions", json={})
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["session_id"])

    async def state(self, session_id: str) -> dict[str, Any]:
        response = await self.client.get(f"/api/sessions/{session_id}")
        assert response.status_code == 200, response.text
        return dict(response.json()["session"])

    async def wait_idle(self, session_id: str, within: float = 10.0) -> dict[str, Any]:
        async def poll() -> dict[str, Any]:
            while True:
                state = await self.state(session_id)
                if not state["busy"]:
                    return state
                await asyncio.sleep(0.02)

        return await asyncio.wait_for(poll(), within)


@asynccontextmanager
async def serve(
    server: ScriptedServer,
    workspace: Path,
    *,
    show_arguments: bool = False,
    buffer_capacity: int = BUFFER_CAPACITY,
    api_key: str = API_KEY,
    settings: dict[str, Any] | None = None,
    allow_remote: bool = False,
    public_origins: tuple[str, ...] = (),
) -> AsyncIterator[Served]:
    """The app of `ink serve` on 127.0.0.1:<free port>, against the scripted model.
    `settings` are session flags (`{"approval": "ask"}`: sessions run `auto` without)."""
    open_args = {
        "base_url": server.base_url,
        "model": "scripted-model",
        "api_key": api_key,
        **(settings or {}),
    }
    token = new_token()
    redactor = Redactor([api_key, *env_secrets(), token], show_arguments=show_arguments)
    registry = SessionRegistry(workspace, open_args, redactor, buffer_capacity=buffer_capacity)
    app = build_app(registry, token, allow_remote=allow_remote, public_origins=public_origins)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(
        app, http=http_implementation(), lifespan="on", log_level="warning", access_log=False
    )
    userver = uvicorn.Server(config)
    task = asyncio.ensure_future(userver.serve(sockets=[sock]))
    while not userver.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=200)
    try:
        async with httpx.AsyncClient(
            base_url=base, headers=headers, timeout=15, limits=limits
        ) as client:
            yield Served(base, token, client, registry)
    finally:
        userver.should_exit = True
        await asyncio.wait_for(task, 15)
        sock.close()


@dataclass
class SseEvent:
    id: int | None
    event: str
    data: dict[str, Any]


async def read_sse(
    response: httpx.Response,
    until: Callable[[list[SseEvent]], bool],
    within: float = 10.0,
    raw: list[str] | None = None,
) -> list[SseEvent]:
    """SSE messages from `response` until `until(events)` holds (or the stream ends).

    The line iterator is kept on the response: an abandoned one would be finalized by
    the loop, which closes the connection, a hang-up the server would act on."""
    events: list[SseEvent] = []
    lines = getattr(response, "_ink_lines", None)
    if lines is None:
        lines = response.aiter_lines()
        response._ink_lines = lines  # type: ignore[attr-defined]

    async def read() -> None:
        fields: dict[str, str] = {}
        async for line in lines:
            if raw is not None:
                raw.append(line)
            if line == "":
                if "data" in fields:
                    events.append(
                        SseEvent(
                            int(fields["id"]) if "id" in fields else None,
                            fields.get("event", "message"),
                            json.loads(fields["data"]),
                        )
                    )
                    if until(events):
                        return
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value[1:] if value.startswith(" ") else value

    await asyncio.wait_for(read(), within)
    return events


def settled(events: list[SseEvent]) -> bool:
    return any(e.event == "agent_settled" for e in events)


def covered(events: list[SseEvent]) -> list[int]:
    """Every seq the events stand for (a merged delta stands for seq_first..seq)."""
    seqs: list[int] = []
    for event in events:
        if event.event == "replay_gap":
            continue
        first = event.data.get("seq_first", event.data["seq"])
        seqs.extend(range(first, event.data["seq"] + 1))
    return seqs
