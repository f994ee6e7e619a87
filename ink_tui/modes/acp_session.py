"""One ACP session: an `AgentSession` and the projection of its public events onto
`session/update`s, permission questions and ink's extension notifications.

What it promises a client (docs/acp.md says the same at length):

1. `prompt` while idle starts a run and answers once the session has **settled**
   (`agent_settled`), after every update of it was sent: `end_turn`, `cancelled` (an
   abort), `max_turn_requests` (the iteration limit), `max_tokens` / `refusal` (the
   model's last reply was cut off / filtered). A failed run is a JSON-RPC error with
   its cause.
2. `prompt` while busy is queued when its `_meta.ink.deliverAs` says how ("steer",
   "follow_up"; the session/inject proposal's "queue" means follow_up) and answered at
   once, `end_turn` with `_meta.ink.queued` = {id, mode}; without it, it is refused, as
   every ink front end refuses a busy prompt. When the loop takes it, a
   `user_message_chunk` with `_meta.ink.deliveredAs` says so.
3. Every change of the queue is an `_ink/queue_update` notification (the whole queue);
   input handed back after an abort is an `_ink/input_restored`.
4. Tool calls: `tool_call` (pending) at `tool_execution_start`, `in_progress` when it
   runs, `completed` / `failed` with its content at `tool_execution_end` (a diff for
   write/edit, the text the model got otherwise).
5. An `approval_request` is a `session/request_permission` about that tool call, sent
   after the call's own update; the option picked is ink's decision, a cancelled
   question (or a failed request) is a denial. An abort closes the question ink-side.
6. A sub-agent's tool calls are tool calls of their own, ids `agent-1/<call id>`, with
   `_meta.ink` = {agentId, parentToolCallId}; its progress (start, each call, its
   replies, its end) is the content of the `task` call that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp.exceptions import RequestError
from acp.helpers import (
    text_block,
    update_agent_message_text,
    update_agent_thought_text,
    update_current_mode,
)
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    PermissionOption,
    PromptResponse,
    SessionModeState,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UnstructuredCommandInput,
    Usage,
    UsageUpdate,
    UserMessageChunk,
)

from ink_tui.api.session import AgentSession
from ink_tui.control.public_event_types import PublicEvent
from ink_tui.core.context_window import window_of
from ink_tui.core.messages import QueueMode
from ink_tui.modes import acp_tools
from ink_tui.modes.acp_outbox import Outbox
from ink_tui.modes.acp_prompt import deliver_as, prompt_text
from ink_tui.modes.acp_types import INPUT_RESTORED, META_KEY, MODES, QUEUE_UPDATE

log = logging.getLogger(__name__)

# ink's decisions as ACP permission options, in the order a client lists them.
_OPTIONS: tuple[tuple[str, str, Any], ...] = (
    ("allow", "Allow once", "allow_once"),
    ("session", "Always allow {rule} in this session", "allow_always"),
    ("always", "Always allow {rule} (saved to .ink/config.toml)", "allow_always"),
    ("deny", "Reject", "reject_once"),
)


@dataclass
class _Call:
    """A tool call the client was told about."""

    name: str
    arguments: dict[str, Any]
    # The file's text before a write/edit ran (for its diff).
    before: str | None = None
    # A task call's progress lines (its sub-agent's start, calls, replies, end).
    lines: list[str] = field(default_factory=list)


class AcpSession:
    def __init__(self, session: AgentSession, client: Client, outbox: Outbox, workspace: Path):
        self.session = session
        self.id = session.session_id
        self.workspace = workspace
        self._client = client
        self._outbox = outbox
        self._calls: dict[str, _Call] = {}
        # A sub-agent's id -> the ACP id of the task call that started it.
        self._task_of: dict[str, str] = {}
        self._questions: dict[str, asyncio.Task[None]] = {}
        # The current prompt's: the last top-level reply's finish reason, usage so far.
        self._finish: str | None = None
        self._usage = {"input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0}
        self._cached = 0
        self._unsubscribe = session.subscribe(self._on_event)

    # -- what the agent answers with ---------------------------------------------------

    def modes(self) -> SessionModeState:
        policy = self.session.controller.approvals.policy
        return SessionModeState(current_mode_id=policy, available_modes=list(MODES))

    def announce_commands(self) -> None:
        """`available_commands_update`: /compact and the extensions' commands (ink's other
        slash commands steer the TUI itself: the editor has its own for those)."""
        commands = [
            AvailableCommand(
                name="compact",
                description="Summarise the older conversation to free context",
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint="what to keep")),
            )
        ]
        for command in self.session.commands:
            commands.append(
                AvailableCommand(
                    name=command["name"].removeprefix("/"),
                    description=command["description"] or f"from {command['extension']}",
                    input=AvailableCommandInput(root=UnstructuredCommandInput(hint="argument")),
                )
            )
        self._send(
            AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=commands
            )
        )

    def set_mode(self, mode_id: str) -> None:
        try:
            self.session.set_approval(mode_id)
        except ValueError as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        self._send(update_current_mode(mode_id))

    def send(self, update: Any) -> None:
        self._send(update)

    async def flush(self) -> None:
        await self._outbox.flush()

    # -- prompting -----------------------------------------------------------------------

    async def prompt(self, blocks: list[Any], meta: dict[str, Any]) -> PromptResponse:
        text = prompt_text(blocks)
        if not text.strip():
            raise RequestError.invalid_params({"details": "the prompt is empty"})
        mode = deliver_as(meta)
        if self.session.is_busy:
            if mode is None:
                raise RequestError.invalid_request(
                    {
                        "details": "a prompt is running: send this one with "
                        '_meta {"ink": {"deliverAs": "steer" | "follow_up"}} to queue it, '
                        "or wait for the running one to end"
                    }
                )
            return self._queue(text, mode)
        self._finish = None
        self._usage = {key: 0 for key in self._usage}
        self._cached = 0
        if not self._run_command(text):
            self.session.start(text)
        result = await self.session.wait_settled()
        await self._outbox.flush()
        if result is None:  # a command that started nothing
            return PromptResponse(stop_reason="end_turn")
        if result.stop_reason == "failed":
            raise RequestError.internal_error({"details": result.error or "the run failed"})
        return PromptResponse(
            stop_reason=self._stop_reason(result.stop_reason), usage=self._total()
        )

    def _queue(self, text: str, mode: QueueMode) -> PromptResponse:
        queued = self.session.steer(text) if mode == "steer" else self.session.follow_up(text)
        info: dict[str, Any] = {"mode": mode}
        if queued is not None:
            info["id"] = queued.id
        else:  # it settled meanwhile, so the text started a run of its own
            info["started"] = True
        return PromptResponse(stop_reason="end_turn", field_meta={META_KEY: {"queued": info}})

    def _run_command(self, text: str) -> bool:
        """A `/name argument` the client was offered: run it; True when it was one."""
        if not text.startswith("/"):
            return False
        name, _, argument = text[1:].partition(" ")
        if name == "compact":
            return self.session.controller.compact(argument.strip()) or True
        known = {c["name"].removeprefix("/") for c in self.session.commands}
        if name in known:
            self.session.run_command(name, argument.strip())
            return True
        return False

    def _stop_reason(self, reason: str) -> Any:
        if reason == "aborted":
            return "cancelled"
        if reason == "max_iterations":
            return "max_turn_requests"
        if self._finish == "length":
            return "max_tokens"
        if self._finish == "content_filter":
            return "refusal"
        return "end_turn"

    def _total(self) -> Usage | None:
        used = self._usage
        if not any(used.values()):
            return None
        return Usage(
            total_tokens=used["input_tokens"] + used["output_tokens"],
            input_tokens=used["input_tokens"],
            output_tokens=used["output_tokens"],
            thought_tokens=used["reasoning_tokens"] or None,
            cached_read_tokens=self._cached or None,
        )

    async def cancel(self) -> None:
        await self.session.abort()

    async def aclose(self) -> None:
        for question in list(self._questions.values()):
            question.cancel()
        await self.session.aclose()
        self._unsubscribe()

    # -- the projection ------------------------------------------------------------------

    def _send(self, update: Any) -> None:
        self._outbox.update(self.id, update)

    def _on_event(self, event: PublicEvent) -> None:
        try:
            self._project(event)
        except Exception:  # a projection bug must not stop the session's events
            log.exception("acp: could not project %s", event.get("type"))

    def _project(self, public: PublicEvent) -> None:
        # Read as a plain mapping: mypy 1.11 (the floor) does not narrow a union of
        # TypedDicts by `match event["type"]`, and each case reads its own keys.
        event: dict[str, Any] = cast("dict[str, Any]", public)
        agent = event.get("agent_id")
        match event["type"]:
            case "message_update" if agent is None:
                delta = event["delta"]
                if delta["type"] == "thinking":
                    self._send(update_agent_thought_text(delta["text"]))
                else:
                    self._send(update_agent_message_text(delta["text"]))
            case "message_end":
                message = event["message"]
                if agent is None:
                    self._finish = message["finish_reason"]
                    self._context_usage(message["usage"])
                elif message["text"].strip():
                    self._progress(agent, f"{agent}: {message['text'].strip()}")
            case "agent_end" if "usage" in event:
                usage = event["usage"]
                for key in self._usage:
                    self._usage[key] += usage[key]
                self._cached += usage["cached_tokens"]
            case "user_message" if agent is None and event["kind"] != "prompt":
                chunk = UserMessageChunk(
                    session_update="user_message_chunk",
                    content=text_block(event["text"]),
                    field_meta={
                        META_KEY: {"deliveredAs": event["kind"], "entryId": event["entry_id"]}
                    },
                )
                self._send(chunk)
            case "tool_execution_start":
                self._tool_start(event["call_id"], event["tool_name"], event["arguments"], event)
            case "tool_execution_running":
                call_id = self._acp_id(event["call_id"], agent)
                self._send(
                    ToolCallProgress(
                        session_update="tool_call_update",
                        tool_call_id=call_id,
                        status="in_progress",
                    )
                )
            case "tool_execution_end":
                self._tool_end(event["call_id"], agent, event["content"], event["is_error"])
            case "subagent_start":
                task = self._acp_id(event["parent_call_id"], event["parent_agent_id"])
                self._task_of[event["agent_id"]] = task
                self._progress(
                    event["agent_id"], f"{event['agent_id']} started: {event['description']}"
                )
            case "subagent_end":
                self._progress(event["agent_id"], f"{event['agent_id']} {event['stop_reason']}")
            case "approval_request":
                request = event["request_id"]
                self._questions[request] = asyncio.ensure_future(self._ask(event))
            case "approval_resolved":
                question = self._questions.pop(event["request_id"], None)
                if question is not None and event["by"] == "interrupt":
                    question.cancel()
            case "queue_update" if agent is None:
                entries = [
                    {"id": e["id"], "text": e["text"], "mode": e["mode"]} for e in event["entries"]
                ]
                self._outbox.notify(
                    QUEUE_UPDATE,
                    {"sessionId": self.id, "entries": entries, "paused": event["paused"]},
                )
            case "input_restored" if agent is None:
                self._outbox.notify(
                    INPUT_RESTORED,
                    {"sessionId": self.id, "text": event["text"], "count": event["count"]},
                )

    def _acp_id(self, call_id: str, agent: str | None) -> str:
        """ACP ids are per session; a sub-agent's call ids start again at call_0."""
        return call_id if agent is None else f"{agent}/{call_id}"

    def _tool_start(self, call_id: str, name: str, arguments: dict[str, Any], event: Any) -> None:
        agent = event.get("agent_id")
        acp_id = self._acp_id(call_id, agent)
        call = _Call(name, arguments)
        if name in acp_tools.FILE_CHANGING:
            call.before = acp_tools.read_for_diff(self.workspace, arguments)
        self._calls[acp_id] = call
        title = acp_tools.tool_title(name, arguments)
        meta = None
        if agent is not None:
            parent = self._task_of.get(agent)
            meta = {META_KEY: {"agentId": agent, "parentToolCallId": parent}}
            self._progress(agent, f"{agent} → {title}")
        self._send(
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=acp_id,
                title=title,
                kind=acp_tools.tool_kind(name),
                status="pending",
                locations=acp_tools.tool_locations(self.workspace, name, arguments) or None,
                raw_input=arguments,
                field_meta=meta,
            )
        )

    def _tool_end(self, call_id: str, agent: str | None, result: str, is_error: bool) -> None:
        acp_id = self._acp_id(call_id, agent)
        call = self._calls.pop(acp_id, None)
        if call is None:
            return
        content = acp_tools.end_content(
            self.workspace, call.name, call.arguments, result, is_error=is_error, before=call.before
        )
        if call.lines:
            content = [acp_tools.text_content("\n".join(call.lines)), *content]
        self._send(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=acp_id,
                status="failed" if is_error else "completed",
                content=content,
            )
        )

    def _progress(self, agent: str, line: str) -> None:
        """A line of a sub-agent's progress, shown as its task call's content."""
        task = self._task_of.get(agent)
        call = self._calls.get(task) if task is not None else None
        if task is None or call is None:
            return
        call.lines.append(line)
        self._send(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=task,
                status="in_progress",
                content=[acp_tools.text_content("\n".join(call.lines))],
            )
        )

    def _context_usage(self, usage: Any) -> None:
        size = window_of(self.session.controller.provider)
        if size is None:
            return  # ACP's usage_update wants the window's size; unknown, none is sent
        used = min(size, usage["input_tokens"] + usage["output_tokens"])
        self._send(UsageUpdate(session_update="usage_update", used=used, size=size))

    # -- permission questions ------------------------------------------------------------

    async def _ask(self, event: Any) -> None:
        request = event["request_id"]
        acp_id = self._acp_id(event["call_id"], event.get("agent_id"))
        call = self._calls.get(acp_id)
        before = call.before if call is not None else None
        rule = event["rule"] or event["tool_name"]
        options = [
            PermissionOption(option_id=decision, name=name.format(rule=rule), kind=kind)
            for decision, name, kind in _OPTIONS
            if decision in event["decisions"]
        ]
        tool_call = ToolCallUpdate(
            tool_call_id=acp_id,
            title=acp_tools.tool_title(event["tool_name"], event["arguments"]),
            kind=acp_tools.tool_kind(event["tool_name"]),
            status="pending",
            content=acp_tools.proposed_content(
                self.workspace, event["tool_name"], event["arguments"], before, event["preview"]
            )
            or None,
            locations=acp_tools.tool_locations(
                self.workspace, event["tool_name"], event["arguments"]
            )
            or None,
        )
        decision, reason = "deny", "the user cancelled the question"
        try:
            # After the tool call's own update: the client knows what it is asked about.
            await self._outbox.flush()
            answer = await self._client.request_permission(
                session_id=self.id,
                tool_call=tool_call,
                options=options,
                **{META_KEY: {"requestId": request, "why": event["why"]}},
            )
        except asyncio.CancelledError:
            return  # an abort closed it; the run no longer waits for it
        except Exception as error:
            log.warning("acp: permission request failed: %s", error)
            reason = "the editor could not ask the user"
        else:
            outcome = answer.outcome
            if isinstance(outcome, AllowedOutcome) and outcome.option_id in event["decisions"]:
                decision = outcome.option_id
                reason = "the user rejected it" if decision == "deny" else ""
        finally:
            self._questions.pop(request, None)
        with contextlib.suppress(ValueError, RuntimeError):
            self.session.answer_approval(request, decision, reason or None)
