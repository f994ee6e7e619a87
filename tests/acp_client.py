"""A real `ink acp` process driven by the ACP SDK's client side, for tests.

`spawn_acp` starts `python -m ink_tui acp` against the scripted server in an isolated
environment (tests/rpc_process.py) and yields the SDK's `ClientSideConnection` with a
`RecordingClient`: every `session/update` and extension notification it received, and
permission questions answered by a policy the test sets. `wait_for` waits on a
condition over what was received (never on a sleep)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)
from acp.stdio import spawn_agent_process

from tests.rpc_process import scripted_args
from tests.scripted_server import ScriptedServer

WITHIN = 30.0


@dataclass
class Question:
    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    meta: dict[str, Any]


@dataclass
class RecordingClient:
    updates: list[tuple[str, Any]] = field(default_factory=list)
    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    # Picks an option id for a question; None cancels it.
    answer: Callable[[Question], str | None] = lambda q: "allow"
    # Set when a question arrives and the test wants to answer it itself.
    hold: asyncio.Event | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        question = Question(session_id, tool_call, options, kwargs)
        await self._record(lambda: self.questions.append(question))
        if self.hold is not None:
            await self.hold.wait()
        choice = self.answer(question)
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await self._record(lambda: self.updates.append((session_id, update)))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        await self._record(lambda: self.notes.append((method, params)))

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def on_connect(self, conn: Any) -> None:
        pass

    async def _record(self, change: Callable[[], None]) -> None:
        async with self._changed:
            change()
            self._changed.notify_all()

    async def wait_for(self, condition: Callable[[], Any], within: float = WITHIN) -> Any:
        """Until `condition()` is truthy; its value."""
        async with self._changed:
            return await asyncio.wait_for(self._changed.wait_for(condition), within)

    def of(self, kind: str) -> list[Any]:
        """The updates whose `session_update` is `kind`, in order."""
        return [u for _, u in self.updates if u.session_update == kind]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))


@dataclass
class Acp:
    conn: ClientSideConnection
    client: RecordingClient
    process: asyncio.subprocess.Process
    stderr: Path

    async def start(self, workspace: Path) -> str:
        await self.conn.initialize(protocol_version=PROTOCOL_VERSION)
        created = await self.conn.new_session(cwd=str(workspace), mcp_servers=[])
        return created.session_id


@asynccontextmanager
async def spawn_acp(
    server: ScriptedServer, workspace: Path, env: dict[str, str], *extra: str
) -> AsyncIterator[Acp]:
    """`ink acp` with the scripted server's flags and `extra`; it must exit 0 once its
    stdin is closed (checked at the end)."""
    client = RecordingClient()
    stderr = workspace.parent / f"acp-stderr-{id(client)}.txt"
    with stderr.open("wb") as err:
        async with spawn_agent_process(
            cast(Client, client),  # the methods a test needs, not the whole protocol
            sys.executable,
            "-m",
            "ink_tui",
            "acp",
            *scripted_args(server, *extra),
            env=env,
            cwd=workspace,
            transport_kwargs={"stderr": err.fileno(), "shutdown_timeout": WITHIN},
        ) as (conn, process):
            yield Acp(conn, client, process, stderr)
    assert process.returncode == 0, stderr.read_text()
