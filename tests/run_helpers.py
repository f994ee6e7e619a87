"""Helpers for tests that drive the run controller against the scripted server."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ink_tui.control.controller import RunController
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.events import Event
from ink_tui.core.tool_api import Tool
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.scripted_server import Gate, ScriptedServer


class Recorder:
    """Collects every bus event; waits for one to arrive."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = asyncio.Event()

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        self._changed.set()

    def of(self, type_name: str) -> list[Any]:
        return [e for e in self.events if e.type == type_name]

    async def wait_for(self, predicate: Any, within: float = 10.0) -> Event:
        async def scan() -> Event:
            seen = 0
            while True:
                for event in self.events[seen:]:
                    if predicate(event):
                        return event
                seen = len(self.events)
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(scan(), within)

    async def wait_type(self, type_name: str, within: float = 10.0) -> Any:
        return await self.wait_for(lambda e: e.type == type_name, within)


def make_controller(
    server: ScriptedServer,
    workspace: Path,
    tools: Sequence[Tool] | None = None,
    settings: RunSettings | None = None,
) -> tuple[RunController, Recorder]:
    from ink_tui.tools import default_tools

    provider = OpenAICompatProvider(
        server.base_url, "scripted-model", "test-key", base_delay=0.01, max_delay=0.05
    )
    controller = RunController(
        provider=provider,
        tools=default_tools() if tools is None else tools,
        workspace=workspace,
        system_prompt="You are a test.",
        settings=settings,
    )
    recorder = Recorder()
    controller.bus.subscribe(recorder)
    return controller, recorder


async def wait_gate(gate: Gate) -> None:
    """Wait until the server holds its stream at `gate` (fails the test if it never does)."""
    assert await asyncio.to_thread(gate.reached.wait, 10), "the server never reached the gate"


async def wait_requests(server: ScriptedServer, count: int, within: float = 10.0) -> None:
    await asyncio.to_thread(server.wait_for_requests, count, within)


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def last_roles(request: dict[str, Any], n: int) -> list[str]:
    return [m["role"] for m in request["messages"][-n:]]
