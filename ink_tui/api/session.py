"""`AgentSession`: one conversation, driven by a program instead of a person.

What it promises a caller (the run-control contract, seen from outside):

- `await prompt(text)` while idle starts a run and returns once the session has
  **settled**: retries done, queued follow-ups run, the queue flushed or handed back.
  While busy, `prompt` without `deliver_as` raises `SessionBusy` (the rule RPC and HTTP
  share); with `deliver_as="steer" | "follow_up"` the text is queued and `prompt`
  returns at once, exactly as the TUI queues Enter and Alt+Enter.
- `abort()` travels the same chain as Ctrl+C (HTTP stream closed, tool process groups
  killed, grace, synthetic results) and returns once the run has settled. Calling it
  again never exits the process.
- A failed or aborted run never loses queued input: the settled result (and the
  `input_restored` event) carries it back, the way the TUI puts it into the editor.
  `clear_queue()` takes entries out first, and then there is nothing to restore.
- Sub-agents (`task` calls): `agents` lists the running ones; `steer` / `follow_up`
  with `agent_id` queue input for one (`AgentGone`, a `LookupError`, when it is not
  running: nothing was queued); `abort_agent(agent_id)` stops only it and returns once
  it has ended (`AgentStopped`). `abort()` stops the whole tree.
- The queue (api/session_queue.py): `queue`, `clear_queue`, `edit`, `set_mode`,
  `move`, `remove` by entry id (`QueueEntryGone` when it was sent or removed).
- Going back (api/session_rewind.py): `tree()`, `rewind(entry_id, restore)`,
  `rewind_preview`, `undo_rewind`, `navigate_tree`, `fork`; idle only.
- Events: `subscribe(callback)` or `async for event in session.events()`, each a public
  event (see `ink_tui.control.public_events` and docs/events.md); `agent_settled` is
  the one "done", exactly once per prompt.
- Extensions (`extensions=True`, the default): the user's load; the project's only when
  its folder is trusted or `trust_extensions=True` (a program is never asked; what was
  skipped is in `warnings`, as is each file that did not load, whose `extension_error`
  the first subscriber receives first). Their commands: `commands`, `run_command`.

- Processes: each session owns its commands and what they leave running (its
  `jobs_update` events list only its own); `aclose()` stops all of it. Nothing
  process-wide is touched (no signal handler, environment variable or subreaper bit):
  `ink_tui.api.install_process_guards()` opts in to the `ink` command's guards, which
  also catch orphans that cleared their environment and a program that exits without
  closing its sessions (see api/process_guards.py).

The session is recorded like the TUI's (same JSONL store), so `ink -c` opens it.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ink_tui.api.event_fanout import EventFanout
from ink_tui.api.session_queue import QueueEditing
from ink_tui.api.session_results import PromptResult, QueuedInput, QueueEntryGone, SessionBusy
from ink_tui.api.session_rewind import GoingBack
from ink_tui.api.subagents import AgentInfo, AgentStopped, RecordedAgent, agent_info
from ink_tui.control.input_queue import TAKE_MODES, TakeMode
from ink_tui.control.public_event_types import AgentSettledEvent, HistoryMessage, PublicEvent
from ink_tui.control.public_events import PublicProjection, history_dict
from ink_tui.core.choices import one_of
from ink_tui.core.messages import QueueMode
from ink_tui.opening import Opening

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController
    from ink_tui.control.public_event_types import SessionState
    from ink_tui.core.messages import ToolCall
    from ink_tui.extensions.host import ExtensionHost
    from ink_tui.extensions.startup import ExtensionOptions
    from ink_tui.session.rewind import SessionRewind
    from ink_tui.session.session_writer import SessionWriter

# The results and errors live in session_results; importers may take them from here.
__all__ = ["AgentSession", "PromptResult", "QueueEntryGone", "QueuedInput", "SessionBusy"]


class AgentSession(GoingBack, QueueEditing):
    """Build with `await AgentSession.open(...)` (or `async with AgentSession.open(...)`)."""

    def __init__(
        self,
        controller: RunController,
        *,
        session_id: str,
        writer: SessionWriter | None = None,
        warnings: list[str] | None = None,
        redact_call: Callable[[ToolCall], dict[str, Any]] | None = None,
        redact_text: Callable[[str], str] | None = None,
        hold_text: Callable[[str], int] | None = None,
        rewind: SessionRewind | None = None,
    ) -> None:
        self.controller = controller
        self._rewind = rewind
        self.session_id = session_id
        self._writer = writer
        self.warnings = list(warnings or [])
        # Remote front ends (ink serve) pass hooks that reduce arguments and mask secrets.
        # A recorded session's seqs go on from where it left off (never repeating).
        self._projection = PublicProjection(
            session_id,
            redact_call=redact_call,
            redact_text=redact_text,
            hold_text=hold_text,
            seqs=writer.event_seqs if writer is not None else None,
        )
        # Subscribers, and the events of the opening (an extension that failed to load)
        # kept for the first of them.
        self._fanout = EventFanout()
        # Resolved by `agent_settled`; made when a run starts, however it was started.
        self._settled: asyncio.Future[PromptResult] | None = None
        self._unsubscribe_bus = controller.bus.subscribe(self._on_event)
        self._closed = False
        self.extensions: ExtensionHost | None = None
        self._recorded: list[RecordedAgent] = []

    # -- building ------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        workspace: str | Path | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        resume: str | None = None,
        continue_: bool = False,
        record: bool = True,
        redact_call: Callable[[ToolCall], dict[str, Any]] | None = None,
        redact_text: Callable[[str], str] | None = None,
        hold_text: Callable[[str], int] | None = None,
        extensions: bool = True,
        trust_extensions: bool = False,
        **settings: Any,
    ) -> Opening[AgentSession]:
        """A session for `workspace` (default: the current folder), from the same config
        the `ink` command reads; keyword settings are the command's flags
        (`steering_mode`, `follow_up_mode`, `max_iterations`, ...). `resume` is a session
        id prefix, `continue_` resumes the one used last; `record=False` writes nothing.
        `redact_call` / `redact_text` / `hold_text` are the event projection's hooks
        (see `PublicProjection`). `extensions=False` loads none; `trust_extensions=True` loads
        the project's without its folder being trusted (this session only);
        `trust_project=True` applies the workspace's `.ink/config.toml` in full without
        it being trusted (else a warning names the keys held back, docs/configuration.md)."""
        from ink_tui.extensions.startup import ExtensionOptions

        return Opening(
            cls._open(
                workspace,
                model=model,
                base_url=base_url,
                api_key=api_key,
                resume=resume,
                continue_=continue_,
                record=record,
                settings=settings,
                redact=(redact_call, redact_text, hold_text),
                extensions=ExtensionOptions(enabled=extensions, trust_project=trust_extensions),
            ),
            AgentSession.aclose,
        )

    @classmethod
    async def _open(
        cls,
        workspace: str | Path | None,
        *,
        model: str | None,
        base_url: str | None,
        api_key: str | None,
        resume: str | None,
        continue_: bool,
        record: bool,
        settings: dict[str, Any],
        redact: tuple[Any, Any, Any] = (None, None, None),
        extensions: ExtensionOptions | None = None,
    ) -> AgentSession:
        from ink_tui.api.session_open import open_parts

        parts = await asyncio.to_thread(
            open_parts,
            Path(workspace) if workspace is not None else Path.cwd(),
            flags={"model": model, "base_url": base_url, "api_key": api_key, **settings},
            resume=resume,
            continue_=continue_,
            record=record,
        )
        session = cls(
            parts.controller,
            session_id=parts.session_id,
            writer=parts.writer,
            warnings=parts.warnings,
            redact_call=redact[0],
            redact_text=redact[1],
            hold_text=redact[2],
            rewind=parts.rewind,
        )
        session._recorded = parts.subagents
        if extensions is not None and extensions.enabled:
            from dataclasses import replace

            session.attach_extensions(replace(extensions, config_dir=parts.config_dir))
        session._fanout.holding = False
        return session

    def attach_extensions(self, options: ExtensionOptions) -> None:
        """Load the extensions `options` allow (on this loop: their setup may act)."""
        from ink_tui.extensions.startup import skipped_message, start_extensions

        # Its handlers see this session's events, seqs and all, as its clients do.
        started = start_extensions(
            self.controller,
            options,
            session_id=self.session_id,
            public_events=self._fanout.tap,
        )
        self.extensions = started.host
        if started.host is not None:
            self.warnings.extend(started.host.load_warnings())
        skipped = skipped_message(started)
        if skipped:
            self.warnings.append(skipped)

    # -- state ---------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        return self.controller.state == "running"

    @property
    def last_seq(self) -> int:
        """The seq of the last event sent (kept from before a reopen); the next is one more."""
        return self._projection.seq

    @property
    def session_file(self) -> Path | None:
        return self._writer.path if self._writer is not None else None

    @property
    def model(self) -> str:
        return self.controller.provider.model

    @property
    def messages(self) -> list[HistoryMessage]:
        """The conversation as the model has it, as JSON-ready dicts."""
        return [history_dict(m) for m in self.controller.history]

    def snapshot(self) -> dict[str, Any]:
        """What RPC `get_state` and HTTP `GET /api/sessions/{id}` report: the keys of
        `public_event_types.SessionState` (a plain dict, which `ink serve` adds to)."""
        settings = self.controller.settings
        open_ids = [r.request_id for r in self.controller.approvals.pending]
        state: SessionState = {
            "session_id": self.session_id,
            "session_file": str(self.session_file) if self.session_file else None,
            "model": self.model,
            "demo": self.controller.provider.is_demo,
            "busy": self.is_busy,
            "state": self._projection.state,
            "steering_mode": settings.steering_mode,
            "follow_up_mode": settings.follow_up_mode,
            "message_count": len(self.controller.history),
            "queue": [
                {"id": e.id, "text": e.text, "mode": e.mode, "source": e.source} for e in self.queue
            ],
            "queue_paused": self.controller.queue_paused,
            "approval": self.controller.approvals.policy,
            "approvals_open": open_ids,
            "waiting": "approval" if open_ids else None,
        }
        return dict(state)

    # -- approvals -----------------------------------------------------------------------

    def answer_approval(self, request_id: str, decision: str, reason: str | None = None) -> None:
        """Answer an `approval_request` event: "allow" (once), "session" (this tool, or
        this command prefix, for the rest of the session), "always" (saved as a rule in
        the workspace's .ink/config.toml) or "deny" (`reason` goes to the model). Raises
        `ValueError` when the question is not open (answered already, closed by an
        abort, unknown) or the decision is not one of these; an answer counts once."""
        self._check_open()
        self.controller.approvals.answer(request_id, decision, reason)

    def set_approval(self, policy: str) -> None:
        """The approval policy, "ask", "edits" or "auto", from the next call on (not saved)."""
        self.controller.approvals.set_policy(policy)

    def set_steering_mode(self, mode: TakeMode) -> None:
        """How many steers one model call takes: "all" or "one-at-a-time" (from the next
        run on: a run reads its modes once, when it starts)."""
        self.controller.settings.steering_mode = _take_mode(mode)

    def set_follow_up_mode(self, mode: TakeMode) -> None:
        self.controller.settings.follow_up_mode = _take_mode(mode)

    # -- prompting -----------------------------------------------------------------------

    async def prompt(
        self, text: str, deliver_as: QueueMode | None = None
    ) -> PromptResult | QueuedInput:
        """Idle: run `text` and return how it settled. Busy: queue it (`deliver_as`) and
        return the queued entry at once, or raise `SessionBusy`."""
        self._check_open()
        if self.is_busy:
            if deliver_as is None:
                raise SessionBusy(
                    "a run is in progress: pass deliver_as='steer' or 'follow_up' to queue, "
                    "or wait for it to settle"
                )
            return self._queue(text, deliver_as)
        settled = self.start(text)
        return await settled

    def start(self, text: str) -> asyncio.Future[PromptResult]:
        """Start a run without waiting for it; the future resolves when it settles."""
        self._check_open()
        if self.is_busy:
            raise SessionBusy("a run is in progress")
        if not text.strip():
            raise ValueError("the prompt is empty")
        self.controller.submit(text)
        if self._settled is None:
            # Nothing started (the session has exited).
            future: asyncio.Future[PromptResult] = asyncio.get_running_loop().create_future()
            future.set_result(PromptResult("failed", error="the session has exited"))
            return future
        return self._settled

    def steer(self, text: str, agent_id: str | None = None) -> QueuedInput | None:
        """Queue a correction for the very next model call; idle, it starts a run instead
        (returns None then). With `agent_id`: for that running sub-agent's next call."""
        return self._deliver(text, "steer", agent_id)

    def follow_up(self, text: str, agent_id: str | None = None) -> QueuedInput | None:
        """Queue a task for when the model would stop; idle, it starts a run instead."""
        return self._deliver(text, "follow_up", agent_id)

    def _deliver(self, text: str, mode: QueueMode, agent_id: str | None) -> QueuedInput | None:
        self._check_open()
        if agent_id is not None:
            entry = self.controller.subagents.deliver(agent_id, text, mode)
            return QueuedInput(entry.id, entry.text, entry.mode)
        if self.is_busy:
            return self._queue(text, mode)
        self.start(text)
        return None

    def _queue(self, text: str, mode: QueueMode) -> QueuedInput:
        if not text.strip():
            raise ValueError("the message is empty")
        entry = self.controller.queue.add(text, mode)
        return QueuedInput(entry.id, entry.text, entry.mode)

    # -- extension commands --------------------------------------------------------------

    @property
    def commands(self) -> list[dict[str, str]]:
        """The slash commands extensions registered: name ("/x"), description, extension."""
        host = self.extensions
        if host is None:
            return []
        return [
            {"name": f"/{c.name}", "description": c.description, "extension": c.extension}
            for c in host.commands.values()
        ]

    def run_command(self, name: str, argument: str = "") -> bool:
        """Run an extension's `/name`; False when no extension registered it."""
        self._check_open()
        return self.extensions is not None and self.extensions.run_command(name, argument)

    async def abort(self) -> PromptResult | None:
        """Abort the run and wait until it has settled; None when nothing was running."""
        settled = self._settled
        if not self.controller.abort():
            return None
        await self.controller.wait_idle()
        return await settled if settled is not None else None

    @property
    def agents(self) -> list[AgentInfo]:
        """The sub-agents running now, in the order they started."""
        now = time.monotonic()
        return [agent_info(a, now) for a in self.controller.subagents.running.values()]

    def recorded_subagents(self) -> list[RecordedAgent]:
        """The sub-agents of the runs before this session was opened, in the order they
        ended (its file recorded each whole conversation); empty for a new session."""
        return copy.deepcopy(self._recorded)

    async def abort_agent(self, agent_id: str) -> AgentStopped:
        """Stop one sub-agent (and any it started) and wait until it has ended; the run
        goes on. `AgentGone` (a `LookupError`) when no such sub-agent is running."""
        self._check_open()
        agent = self.controller.abort_agent(agent_id)
        end = await asyncio.shield(agent.ended)
        return AgentStopped(agent_id, end.stop_reason, end.result)

    async def wait_settled(self) -> PromptResult | None:
        """Wait for the current prompt to settle; None when nothing is running."""
        settled = self._settled
        return await asyncio.shield(settled) if settled is not None else None

    # -- events --------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[PublicEvent], object]) -> Callable[[], None]:
        """Call `callback` with every later public event; returns an unsubscribe. The
        first subscriber also gets the events of the opening first (`extension_error`)."""
        return self._fanout.subscribe(callback)

    def events(self) -> AsyncIterator[PublicEvent]:
        """Every later public event, in order, until the session is closed."""
        return self._fanout.events()

    def _on_event(self, event: Any) -> None:
        for public in self._projection.project(event):
            if public["type"] == "state_change":
                if public["state"] == "running" and self._settled is None:
                    self._settled = asyncio.get_running_loop().create_future()
            elif public["type"] == "agent_settled":
                self._resolve(public)
            self._fanout.publish(public)

    def _resolve(self, settled: AgentSettledEvent) -> None:
        future, self._settled = self._settled, None
        if future is not None and not future.done():
            future.set_result(
                PromptResult(
                    stop_reason=settled["stop_reason"],
                    error=settled["error"],
                    restored_text=settled["restored_text"],
                    restored_count=settled["restored_count"],
                )
            )

    # -- closing -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this session is closed")

    async def aclose(self) -> None:
        """Abort anything running, wait for it to settle, stop what the session's commands
        left running, close the session file."""
        if self._closed:
            return
        if self.is_busy:
            await self.abort()
        self._closed = True
        if self.extensions is not None:
            self.extensions.close()
        await self.controller.aclose()
        if self.controller.jobs is not None:
            # Its jobs belong to it: a server's other sessions keep theirs.
            await self.controller.jobs.aclose()
        self._unsubscribe_bus()
        self._fanout.close()
        if self._writer is not None:
            await asyncio.to_thread(self._writer.close)

    async def __aenter__(self) -> AgentSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _take_mode(mode: str) -> TakeMode:
    taken = one_of(mode, TAKE_MODES)
    if taken is None:
        raise ValueError(f"mode must be 'all' or 'one-at-a-time', not {mode!r}")
    return taken
