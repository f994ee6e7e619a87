"""The sessions one `ink serve` holds open, each with its own lock, log and run.

What it promises:

- Many sessions per server. Each `ServedSession` has its own `asyncio.Lock` for the
  steps that must not interleave (check busy, then start or queue; queue edits); there
  is no server-wide busy flag, and one session's run never waits on another's.
- Every event a session emits is redacted (`redact.Redactor`) before it enters the
  session's `EventLog`: nothing unredacted is ever buffered, so nothing unredacted can
  be replayed. An `approval_request` carries the call's whole arguments (masked):
  they are what the user is asked about.
- The open approval questions are kept with the session (`approvals`, in its state),
  so a page loaded while one is open shows it; answered ones are remembered by id
  (`answered`), so a second answer is told it came too late.
- A session is the same JSONL file the TUI writes, and it is locked while open here:
  another process (the TUI, `ink -p`, RPC, another server) is refused while this server
  holds it, and this server is refused (`SessionLocked`, HTTP 409) a session open
  elsewhere. Resuming a session already open here returns that session.
- `aclose()` (server shutdown) aborts every run, waits for each to settle, stops every
  session's jobs, closes the files (releasing their locks) and ends every event stream
  (after its session's last events). It closes once: a later call, and a `close()` of
  a session already closing (a DELETE meanwhile), wait for that close to end. Once it
  has begun no session opens any more (`RegistryClosed`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ink_tui.api.session import AgentSession
from ink_tui.serve.agent_log import AgentLog, recorded_shown
from ink_tui.serve.events_stream import BUFFER_CAPACITY, EventLog
from ink_tui.serve.redact import Redactor

log = logging.getLogger(__name__)


@dataclass(eq=False)
class ServedSession:
    session: AgentSession
    log: EventLog
    redactor: Redactor
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Open questions, by request id: the `approval_request` events as they were sent.
    approvals: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Closed questions, by request id: how each was answered ("deny" after an abort).
    answered: dict[str, str] = field(default_factory=dict)
    # Its sub-agents' events, for a page that loads after they began (`agent_log`).
    agents: AgentLog = field(default_factory=AgentLog)

    @property
    def id(self) -> str:
        return self.session.session_id

    def take(self, event: dict[str, Any]) -> None:
        """A public event of the session: redacted, noted if a question, buffered."""
        kind = event.get("type")
        if kind == "approval_request":
            request_id = str(event["request_id"])
            shown = self.redactor.approval(event, self._arguments_asked(request_id))
            self.approvals[request_id] = shown
        else:
            shown = self.redactor.event(event)
            if kind == "approval_resolved":
                request_id = str(event["request_id"])
                self.approvals.pop(request_id, None)
                interrupted = event.get("by") == "interrupt"
                how = "denied: the run was interrupted" if interrupted else event["decision"]
                self.answered[request_id] = str(how)
        self.agents.take(shown)
        self.log.append(shown)

    def _arguments_asked(self, request_id: str) -> dict[str, Any] | None:
        # The question is open while its event is sent (the bus delivers synchronously).
        for request in self.session.controller.approvals.pending:
            if request.request_id == request_id:
                return dict(request.call.arguments)
        return None

    def state(self) -> dict[str, Any]:
        """`AgentSession.snapshot()` plus `last_seq` and the open `approvals`, as it may
        leave the server."""
        snapshot = self.session.snapshot()
        # Where the file lives on the server is none of a remote page's business.
        snapshot.pop("session_file", None)
        snapshot["last_seq"] = self.log.last_seq
        # Open questions in full (masked already), in the order they were asked.
        snapshot["approvals"] = list(self.approvals.values())
        return self.redactor.deep(snapshot)

    def queue(self) -> list[dict[str, Any]]:
        return self.redactor.deep([asdict(e) for e in self.session.queue])

    def messages(self) -> list[dict[str, Any]]:
        return self.redactor.messages(self.session.messages)

    def subagents(self) -> list[dict[str, Any]]:
        """Those of the runs before it was opened here (recorded), then those seen since."""
        live = self.agents.shown()
        seen = {(a["agent_id"], a["parent_call_id"]) for a in live}
        earlier = [
            agent
            for agent in self.session.recorded_subagents()
            if (agent["agent_id"], agent["parent_call_id"]) not in seen
        ]
        return recorded_shown(earlier, self.redactor) + live


class RegistryClosed(RuntimeError):
    """The server is stopping: no session opens any more."""


class SessionRegistry:
    def __init__(
        self,
        workspace: Path,
        open_args: dict[str, Any],
        redactor: Redactor,
        *,
        buffer_capacity: int = BUFFER_CAPACITY,
    ) -> None:
        self.workspace = workspace
        self.redactor = redactor
        self._capacity = buffer_capacity
        self._open_args = open_args
        self._sessions: dict[str, ServedSession] = {}
        # Resumes are opened one at a time, so that two requests for the same saved
        # session get the one that opened first rather than a lock refusal. New
        # sessions and runs never wait on it.
        self._resuming = asyncio.Lock()
        self._tasks: set[asyncio.Future[Any]] = set()
        # The closes under way, by session, and the registry's own (`aclose`).
        self._closes: dict[ServedSession, asyncio.Future[None]] = {}
        self._closing: asyncio.Future[None] | None = None

    def __iter__(self) -> Any:
        return iter(tuple(self._sessions.values()))

    def get(self, session_id: str) -> ServedSession | None:
        return self._sessions.get(session_id)

    async def open(self, resume: str | None = None) -> tuple[ServedSession, bool]:
        """A new session, or the saved one `resume` (an id prefix) names; the flag says
        whether it was opened now (False: it was open here already). Raises what
        `AgentSession.open` raises (`SessionLookupError`, `SessionLocked`, ...), and
        `RegistryClosed` once the server is stopping."""
        if resume is None:
            return self._add(await self._open_session(None)), True
        async with self._resuming:
            found = self._find_open(resume)
            if found is not None:
                return found, False
            return self._add(await self._open_session(resume)), True

    async def close(self, served: ServedSession) -> None:
        """Abort its run, stop its jobs, close its file (and lock), end its streams. A
        second call waits for the first; a cancelled caller leaves the close running."""
        closing = self._closes.get(served)
        if closing is None:
            self._sessions.pop(served.id, None)
            closing = asyncio.ensure_future(self._close(served))
            self._closes[served] = closing
            closing.add_done_callback(lambda _: self._closes.pop(served, None))
        await asyncio.shield(closing)

    async def _close(self, served: ServedSession) -> None:
        try:
            await served.session.aclose()
        finally:
            served.log.close()

    def background(self, coro: Coroutine[Any, Any, Any], what: str) -> None:
        """Run `coro` beside the requests (an abort after a hang-up), logging a failure."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(finished: asyncio.Future[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("%s failed", what, exc_info=finished.exception())

        task.add_done_callback(done)

    async def aclose(self) -> None:
        """Close every session (see the module); every call waits for the one close."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close_all())
        await asyncio.shield(self._closing)

    async def _close_all(self) -> None:
        closes = [*(self.close(s) for s in self), *self._closes.values()]
        await asyncio.gather(*closes, return_exceptions=True)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- listing ------------------------------------------------------------------------

    async def listing(self) -> list[dict[str, Any]]:
        """Open sessions first, then the workspace's saved ones (newest first)."""
        from ink_tui.session.catalog import list_sessions

        rows = []
        for served in self:
            snapshot = served.session.snapshot()
            first = next(
                (m["content"] for m in served.session.messages if m.get("role") == "user"), ""
            )
            rows.append(
                {
                    "id": served.id,
                    "busy": snapshot["busy"],
                    "state": snapshot["state"],
                    "model": snapshot["model"],
                    "message_count": snapshot["message_count"],
                    "first_prompt": first if isinstance(first, str) else "",
                    "open": True,
                }
            )
        saved = await asyncio.to_thread(list_sessions, self.workspace)
        for summary in saved:
            if summary.id in self._sessions:
                continue
            rows.append(
                {
                    "id": summary.id,
                    "busy": False,
                    "state": "closed",
                    "model": summary.model,
                    "message_count": summary.message_count,
                    "first_prompt": summary.first_prompt,
                    "open": False,
                    "started": summary.started.isoformat(),
                }
            )
        return self.redactor.deep(rows)

    # -- opening ------------------------------------------------------------------------

    def _find_open(self, prefix: str) -> ServedSession | None:
        wanted = prefix.strip().lower()
        matches = [s for s in self if s.id.lower().startswith(wanted)]
        return matches[0] if len(matches) == 1 and wanted else None

    async def _open_session(self, resume: str | None) -> AgentSession:
        if self._closing is not None:
            raise RegistryClosed("the server is stopping")
        session = await self._open(resume)
        if self._closing is not None:
            # It opened while the others were being closed: it closes too.
            await session.aclose()
            raise RegistryClosed("the server is stopping")
        return session

    async def _open(self, resume: str | None) -> AgentSession:
        return await AgentSession.open(
            self.workspace,
            resume=resume,
            redact_call=self.redactor.call,
            redact_text=self.redactor.text,
            hold_text=self.redactor.straddling,
            **self._open_args,
        )

    def _add(self, session: AgentSession) -> ServedSession:
        # The log goes on from the session's last seq (kept across reopen and restart),
        # so a client's Last-Event-ID from before is told of its gap, not taken as new.
        events = EventLog(session.session_id, self._capacity, last_seq=session.last_seq)
        served = ServedSession(session, events, self.redactor)
        # Redacted once, on the way in: the buffer and every client see the same event.
        session.subscribe(lambda event: served.take(dict(event)))
        self._sessions[served.id] = served
        for warning in session.warnings:
            log.warning("session %s: %s", served.id, warning)
        return served
