"""`ink acp`'s agent: the ACP methods, each over one `AcpSession` per ACP session.

What it promises a client (protocol v1; docs/acp.md maps every method):

- `initialize`: `loadSession` true; prompts take text, resource links and embedded
  context (no images, no audio); no MCP servers (ink does not run them: any passed to
  `session/new` are ignored with a warning on stderr); no authentication (the model's
  key comes from ink's config, environment or `--api-key`). Run control is advertised
  in `_meta`: `steering.supported` (the `_session/steering` extension the adapters
  ship) and `ink.runControl` (deliverAs, the queue notifications).
- `session/new`: its `cwd` is the workspace of a new `AgentSession`; its id is ink's
  session id, so `session/load` (and `ink -r`) find it again. The approval policy is
  "ask" unless `--approval` said otherwise; `modes` lists ask / edits / auto.
- `session/load`: ink's saved session of that id (in that workspace) reopened, its
  conversation replayed as updates before the response.
- `session/prompt`, `session/cancel`, `session/set_mode`: see `acp_session`.
- `_session/steering` {sessionId, prompt}: a steer for the running prompt, `injected`;
  `failed` with a reason when no prompt runs (the client then sends a prompt).
- `_ink/remove_queued` {sessionId, id} and `_ink/clear_queue` {sessionId}: queued input
  taken back before the loop takes it; each answers what it removed.
- The connection's end (stdin closed) or a signal closes every session: runs aborted
  and settled, sessions saved, their processes stopped.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION
from acp.exceptions import RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptRequest,
    PromptResponse,
    SetSessionModeResponse,
)

from ink_tui import __version__
from ink_tui.api.session import AgentSession
from ink_tui.api.session_results import QueueEntryGone
from ink_tui.modes.acp_outbox import Outbox
from ink_tui.modes.acp_prompt import prompt_text
from ink_tui.modes.acp_replay import replay
from ink_tui.modes.acp_session import AcpSession
from ink_tui.modes.acp_types import (
    CLEAR_QUEUE,
    INPUT_RESTORED,
    META_KEY,
    MODE_IDS,
    QUEUE_UPDATE,
    REMOVE_QUEUED,
    STEERING,
)

log = logging.getLogger(__name__)


class InkAgent:
    def __init__(self, open_args: dict[str, Any]) -> None:
        # AgentSession.open's keywords less the workspace, which each session/new names.
        self._open_args = open_args
        self._sessions: dict[str, AcpSession] = {}
        self._client: Client | None = None
        self._outbox: Outbox | None = None
        self._closing = False

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def _out(self) -> Outbox:
        if self._outbox is None:
            assert self._client is not None, "on_connect comes first"
            self._outbox = Outbox(self._client)
        return self._outbox

    # -- the protocol's methods ----------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=False, sse=False),
            ),
            auth_methods=[],
            agent_info=Implementation(name="ink", title="ink", version=__version__),
            field_meta={
                "steering": {"supported": True},
                META_KEY: {
                    "runControl": {
                        "deliverAs": ["steer", "follow_up"],
                        "queueUpdate": f"_{QUEUE_UPDATE}",
                        "inputRestored": f"_{INPUT_RESTORED}",
                    }
                },
            },
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise RequestError.invalid_params({"details": "ink needs no authentication"})

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        session = await self._open(cwd, None, mcp_servers)
        return NewSessionResponse(session_id=session.id, modes=session.modes())

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        if not self._open_args.get("record", True):
            raise RequestError.invalid_request({"details": "ink acp runs with --no-session"})
        old = self._sessions.pop(session_id, None)
        if old is not None:
            await old.aclose()
        session = await self._open(cwd, session_id, mcp_servers)
        if session.id != session_id:
            # A prefix that named a longer id: the client knows the session by its own.
            self._sessions[session_id] = self._sessions.pop(session.id)
            session.id = session_id
        for update in replay(session.session.messages, session.workspace):
            session.send(update)
        await session.flush()
        return LoadSessionResponse(modes=session.modes())

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        if mode_id not in MODE_IDS:
            raise RequestError.invalid_params({"details": f"mode must be one of {MODE_IDS}"})
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        return await self._session(session_id).prompt(prompt, kwargs)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            await session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        session = self._session(str(params.get("sessionId")))
        if method == REMOVE_QUEUED:
            entry = params.get("id")
            if not isinstance(entry, int):
                raise RequestError.invalid_params({"details": "`id` (a queue entry's) is missing"})
            try:
                removed = session.session.remove(entry)
            except QueueEntryGone as error:
                raise RequestError.invalid_params({"details": str(error)}) from None
            return {"removed": {"id": removed.id, "text": removed.text, "mode": removed.mode}}
        if method == CLEAR_QUEUE:
            cleared = session.session.clear_queue()
            return {"removed": [{"id": e.id, "text": e.text, "mode": e.mode} for e in cleared]}
        if method != STEERING:
            raise RequestError.method_not_found(f"_{method}")
        blocks = params.get("prompt")
        if not isinstance(blocks, list):
            raise RequestError.invalid_params({"details": "`prompt` must be content blocks"})
        parsed = PromptRequest.model_validate({"sessionId": session.id, "prompt": blocks})
        text = prompt_text(list(parsed.prompt))
        if not session.session.is_busy:
            return {"outcome": "failed", "reason": "no prompt is running: send session/prompt"}
        queued = session.session.steer(text)
        if queued is None:
            return {"outcome": "startedNewTurn"}
        return {"outcome": "injected", "_meta": {META_KEY: {"id": queued.id}}}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.debug("acp: ignoring notification _%s", method)

    # -- sessions ------------------------------------------------------------------------

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"details": f"no session {session_id!r}"})
        return session

    async def _open(
        self, cwd: str, resume: str | None, mcp_servers: list[Any] | None
    ) -> AcpSession:
        if self._closing:
            raise RequestError.invalid_request({"details": "ink acp is closing"})
        workspace = Path(cwd)
        if not workspace.is_absolute() or not await asyncio.to_thread(workspace.is_dir):
            raise RequestError.invalid_params({"details": f"cwd {cwd!r} is not an absolute folder"})
        if mcp_servers:
            print(
                f"ink: MCP servers are not supported; ignoring {len(mcp_servers)}", file=sys.stderr
            )
        args = {**self._open_args, "workspace": workspace, "resume": resume}
        try:
            opened = await AgentSession.open(**args)
        except (LookupError, ValueError, OSError) as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        for warning in opened.warnings:
            print(f"ink: {warning}", file=sys.stderr)
        assert self._client is not None
        session = AcpSession(opened, self._client, self._out, workspace)
        self._sessions[session.id] = session
        # After the response that tells the client the session's id (the response is
        # queued before the loop runs this callback).
        asyncio.get_running_loop().call_soon(session.announce_commands)
        return session

    async def aclose(self) -> None:
        """Close every session (runs aborted and settled), then the outbox."""
        self._closing = True
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(s.aclose() for s in sessions), return_exceptions=True)
        if self._outbox is not None:
            await self._outbox.aclose()
