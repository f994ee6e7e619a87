"""The public event protocol: what programs see of a session, written once.

The Python API, RPC mode and the HTTP service all speak these events, so they cannot
drift apart. Each is a JSON-ready dict with `type`, `v` (the protocol version), the
session's id, its own increasing `seq` (per session, no gaps; a recorded session's goes
on across reopen and restart, never repeating: `SeqSource`) and the `run_id` of the run
it belongs to (None between runs). The names follow the seed (pi's runtime events):

| public                         | from (core/events.py)          |
| ------------------------------ | ------------------------------ |
| agent_start                    | run_start                      |
| turn_start / turn_end          | same                           |
| user_message                   | user_message (prompt, steer, follow-up entering the history) |
| message_update                 | text_delta, thinking_delta     |
| message_end                    | same                           |
| tool_execution_start/_running/_settled/_end | tool_start/_running/_settled/_end |
| queue_update                   | same                           |
| auto_retry_start / _end        | the retry notice; the next sign of life or the run's end |
| agent_end                      | each attempt's end: a retried failure (will_retry) and run_end |
| state_change                   | state (idle, running, interrupting, exited)  |
| agent_settled                  | running -> idle/exited: the one "done", once per prompt |
| input_restored                 | same                           |
| server_waiting                 | same (the server has been silent N s; `over` when bytes flow) |
| jobs_update                    | same (processes commands left running) |
| subagent_start / _end          | same (a `task` call's sub-agent began; ended, with its result) |
| approval_request / _resolved   | same (a call waits for the user's yes; the answer) |
| compaction_start / _end        | same (older conversation summarised to fit the window) |
| error                          | the "run failed" notice        |
| extension_error                | a failed extension handler (its notice follows) |
| notice                         | every other notice             |

"Done" is `agent_settled`: the queue has been flushed or restored and the session is
idle. A prompt may contain several runs (entries still queued when a run completes start
runs of their own), each with `agent_start` / `agent_end`; `agent_settled` comes once, at
the end of the last.

A sub-agent's events (core events with an `agent_id`) carry `agent_id` and
`parent_call_id`; top-level ones carry neither. A sub-agent has no agent_start,
agent_end, state_change or agent_settled of its own (its retries get auto_retry_* only):
its run is `subagent_start` .. `subagent_end`, inside the parent's run.

Tool arguments and results pass through `redact`, which front ends that serve remote
clients replace (the HTTP service masks secrets and reduces arguments); local front ends
keep them whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal, cast

from ink_tui.control import public_event_types as pub
from ink_tui.control.event_seqs import CountingSeqs, SeqSource
from ink_tui.control.held_text import HeldText
from ink_tui.control.public_event_types import (
    PROTOCOL_VERSION,
    PUBLIC_EVENT_TYPES,
    EndReason,
    HistoryMessage,
    PublicEvent,
    PublicState,
)
from ink_tui.control.public_retries import Retries
from ink_tui.control.public_settle import Settle
from ink_tui.control.public_values import (
    call_dict,
    history_dict,
    job_infos,
    message_dict,
    queue_entries,
    usage_dict,
)
from ink_tui.core.events import (
    ApprovalRequest,
    ApprovalResolved,
    CompactionEnd,
    CompactionStart,
    Event,
    InputRestored,
    JobsUpdate,
    MessageEnd,
    Notice,
    QueueUpdate,
    Rewound,
    RunEnd,
    RunStart,
    ServerWaiting,
    StateChange,
    SubagentEnd,
    SubagentStart,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolRunning,
    ToolSettled,
    ToolStart,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)
from ink_tui.core.messages import ToolCall
from ink_tui.core.tool_summary import summary_line

# The types live in public_event_types, the value conversions in public_values; these
# names are kept here for importers.
__all__ = [
    "PROTOCOL_VERSION",
    "PUBLIC_EVENT_TYPES",
    "HistoryMessage",
    "PublicEvent",
    "PublicProjection",
    "history_dict",
    "message_dict",
    "queue_entries",
    "usage_dict",
]


class PublicProjection:
    """Turns one session's internal events into public ones (stateful: retries, settle).

    `redact_call` maps a tool call's arguments to what may be shown (identity by
    default); `redact_text` is applied to every text that may carry a secret;
    `hold_text` says how much of streamed text's end may begin one, held back for the
    next delta (control/held_text.py). `seqs` numbers the events (default: from 1, in
    memory).
    """

    def __init__(
        self,
        session_id: str,
        *,
        redact_call: Callable[[ToolCall], dict[str, Any]] | None = None,
        redact_text: Callable[[str], str] | None = None,
        hold_text: Callable[[str], int] | None = None,
        seqs: SeqSource | None = None,
    ) -> None:
        self.session_id = session_id
        self._seqs: SeqSource = seqs if seqs is not None else CountingSeqs()
        self._redact_call = redact_call or (lambda call: call.arguments)
        self._redact_text = redact_text or (lambda text: text)
        # Streamed text whose end may begin a secret waits for the next delta.
        self._held = HeldText(self._redact_text, hold_text) if hold_text is not None else None
        self._retries = Retries()
        self._settle = Settle()
        self._fast_deltas = True

    @property
    def state(self) -> PublicState:
        """The session's state as the last `state_change` said it."""
        return self._settle.state

    @property
    def seq(self) -> int:
        """The last seq given to an event (or kept from before the session reopened)."""
        return self._seqs.last

    def _head(self, run_id: str | None) -> pub.Envelope:
        """The next event's envelope: each call takes the next `seq`."""
        return {
            "v": PROTOCOL_VERSION,
            "session_id": self.session_id,
            "seq": self._seqs.next(),
            "run_id": run_id,
        }

    @property
    def fast_deltas(self) -> bool:
        """Whether a delta may take `_delta`: while no retry waits for its sign of life
        (and unless switched off, as a test compares it with the general path)."""
        return self._fast_deltas and not self._retries.pending

    def _delta(
        self,
        event: TextDelta | ThinkingDelta,
        emit: Callable[[PublicEvent], None],
        head: Callable[[], pub.Envelope],
    ) -> None:
        """A text or thinking delta: after what the agent's other stream held, what of
        this one may go out now (masked)."""
        kind: Literal["text", "thinking"] = "text" if type(event) is TextDelta else "thinking"
        held = self._held
        if held is None:
            shown = self._redact_text(event.text)
        else:
            if held.holding:
                self._release(event.agent_id, emit, head, but=kind)
            shown = held.take((event.agent_id, kind), event.text)
            if not shown:
                return
        delta: pub.TextDeltaInfo = {"type": kind, "text": shown}
        emit(pub.MessageUpdateEvent(type="message_update", **head(), delta=delta))

    def _release(
        self,
        agent: str | None,
        emit: Callable[[PublicEvent], None],
        head: Callable[[], pub.Envelope],
        but: str | None = None,
    ) -> None:
        assert self._held is not None
        for kind, shown in self._held.release(agent, but=but):
            delta: pub.TextDeltaInfo = {"type": kind, "text": shown}
            emit(pub.MessageUpdateEvent(type="message_update", **head(), delta=delta))

    def project(self, event: Event) -> list[PublicEvent]:
        out = self._project(event)
        agent_id = event.agent_id
        if agent_id is not None:
            for public in out:
                public["agent_id"] = agent_id
                public["parent_call_id"] = event.parent_call_id or ""
        return out

    def _project(self, event: Event) -> list[PublicEvent]:
        cls = type(event)
        if (cls is TextDelta or cls is ThinkingDelta) and self.fast_deltas:
            # Most of a run's events, straight to their case: nothing held is released
            # before a delta, and no retry waits for this sign of life.
            delta: list[PublicEvent] = []
            run_id = event.run_id
            self._delta(
                cast("TextDelta | ThinkingDelta", event),
                delta.append,
                lambda: self._head(run_id),
            )
            return delta
        out: list[PublicEvent] = []
        emit = out.append
        run_id = event.run_id
        agent = event.agent_id

        def head() -> pub.Envelope:
            return self._head(run_id)

        if self._held is not None and not isinstance(event, TextDelta | ThinkingDelta):
            # The agent's streams ended or paused: what they held goes before this event.
            self._release(agent, emit, head)
        self._retries.seen(event, emit, head)
        text = self._redact_text
        match event:
            case RunStart():
                self._settle.run_started()
                emit(
                    pub.AgentStartEvent(
                        type="agent_start", **head(), kind=event.kind, prompt=text(event.prompt)
                    )
                )
            case TurnStart():
                emit(pub.TurnStartEvent(type="turn_start", **head(), turn=event.turn))
            case TurnEnd():
                emit(pub.TurnEndEvent(type="turn_end", **head(), turn=event.turn))
            case UserMessageEvent():
                emit(
                    pub.UserMessageEvent(
                        type="user_message",
                        **head(),
                        text=text(event.text),
                        kind=event.kind,
                        source=event.source or "user",
                        custom_type=event.custom_type,
                        entry_id=event.entry_id,
                    )
                )
            case TextDelta() | ThinkingDelta():
                self._delta(event, emit, head)
            case MessageEnd():
                message = message_dict(event.message)
                message["text"] = text(message["text"])
                message["tool_calls"] = [
                    {**call_dict(c), "arguments": self._redact_call(c)}
                    for c in event.message.tool_calls
                ]
                emit(pub.MessageEndEvent(type="message_end", **head(), message=message))
            case ToolStart():
                emit(
                    pub.ToolExecutionStartEvent(
                        type="tool_execution_start",
                        **head(),
                        call_id=event.call.id,
                        tool_name=event.call.name,
                        arguments=self._redact_call(event.call),
                        concurrent=event.concurrent,
                    )
                )
            case ToolRunning():
                emit(
                    pub.ToolExecutionRunningEvent(
                        type="tool_execution_running", **head(), call_id=event.call_id
                    )
                )
            case ToolSettled():
                emit(
                    pub.ToolExecutionSettledEvent(
                        type="tool_execution_settled",
                        **head(),
                        call_id=event.call_id,
                        is_error=event.result.is_error,
                        duration_s=round(event.duration_s, 3),
                    )
                )
            case ToolEnd():
                shown_call = replace(event.call, arguments=self._redact_call(event.call))
                emit(
                    pub.ToolExecutionEndEvent(
                        type="tool_execution_end",
                        **head(),
                        call_id=event.call.id,
                        tool_name=event.call.name,
                        is_error=event.result.is_error,
                        content=text(event.message.content),
                        # From the shown arguments: the summary names the call's main
                        # argument (a bash command), which a remote front end may withhold.
                        summary=text(summary_line(shown_call, event.result, event.duration_s)),
                        duration_s=round(event.duration_s, 3),
                    )
                )
            case QueueUpdate():
                emit(
                    pub.QueueUpdateEvent(
                        type="queue_update",
                        **head(),
                        entries=queue_entries(event.entries),
                        paused=event.paused,
                    )
                )
            case RunEnd():
                self._retries.ended(agent, emit, head)
                stop: EndReason = event.stop_reason or "failed"
                error = text(event.error) if event.error else None
                self._settle.run_ended(stop, error)
                emit(
                    pub.AgentEndEvent(
                        type="agent_end",
                        **head(),
                        will_retry=False,
                        stop_reason=stop,
                        error=error,
                        usage=usage_dict(event.usage),
                        turns=event.turns,
                        duration_s=round(event.duration_s, 3),
                    )
                )
            case StateChange():
                self._settle.state_changed(event, emit, head)
            case InputRestored():
                restored = text(event.text)
                if agent is None:
                    self._settle.input_restored(restored, event.count)
                emit(
                    pub.InputRestoredEvent(
                        type="input_restored", **head(), text=restored, count=event.count
                    )
                )
            case ServerWaiting():
                emit(
                    pub.ServerWaitingEvent(
                        type="server_waiting",
                        **head(),
                        seconds=round(event.seconds, 1),
                        limit_s=event.limit_s,
                        over=event.over,
                    )
                )
            case JobsUpdate():
                jobs = job_infos(event.jobs)
                emit(pub.JobsUpdateEvent(type="jobs_update", **head(), jobs=jobs))
            case SubagentStart():
                emit(
                    pub.SubagentStartEvent(
                        type="subagent_start",
                        **head(),
                        description=text(event.description),
                        prompt=text(event.prompt),
                        depth=event.depth,
                        parent_agent_id=event.parent_agent_id,
                    )
                )
            case SubagentEnd():
                self._retries.ended(agent, emit, head)
                emit(
                    pub.SubagentEndEvent(
                        type="subagent_end",
                        **head(),
                        description=text(event.description),
                        stop_reason=event.stop_reason,
                        result=text(event.result),
                        error=text(event.error) if event.error else None,
                        usage=usage_dict(event.usage),
                        turns=event.turns,
                        duration_s=round(event.duration_s, 3),
                    )
                )
            case ApprovalRequest():
                # A literal, not `**head()`: the checker cannot tell an unpacked
                # envelope lacks `agent_description` (as in public_retries).
                envelope = head()
                asked: pub.ApprovalRequestEvent = {
                    "type": "approval_request",
                    "v": envelope["v"],
                    "session_id": envelope["session_id"],
                    "seq": envelope["seq"],
                    "run_id": envelope["run_id"],
                    "request_id": event.request_id,
                    "call_id": event.call.id,
                    "tool_name": event.call.name,
                    "arguments": self._redact_call(event.call),
                    "why": event.why,
                    "rule": event.rule,
                    "path": event.path,
                    "preview": text(event.preview),
                    "preview_note": text(event.preview_note),
                    "decisions": ["allow", "session", "always", "deny"]
                    if event.rule is not None
                    else ["allow", "deny"],
                }
                if event.agent_description is not None:
                    asked["agent_description"] = text(event.agent_description)
                emit(asked)
            case ApprovalResolved():
                emit(
                    pub.ApprovalResolvedEvent(
                        type="approval_resolved",
                        **head(),
                        request_id=event.request_id,
                        call_id=event.call_id,
                        decision=event.decision,
                        reason=text(event.reason) if event.reason else None,
                        by=event.by,
                    )
                )
            case CompactionStart():
                emit(
                    pub.CompactionStartEvent(
                        type="compaction_start",
                        **head(),
                        reason=event.reason,
                        tokens_before=event.tokens_before,
                        context_window=event.context_window,
                    )
                )
            case CompactionEnd():
                emit(
                    pub.CompactionEndEvent(
                        type="compaction_end",
                        **head(),
                        reason=event.reason,
                        done=event.done,
                        aborted=event.aborted,
                        error=text(event.error) if event.error else None,
                        tokens_before=event.tokens_before,
                        tokens_after=event.tokens_after,
                        summary=text(event.summary),
                        first=event.first,
                        end=event.end,
                    )
                )
            case Rewound():
                emit(
                    pub.RewoundEvent(
                        type="rewound",
                        **head(),
                        restore=cast(Any, event.restore),
                        leaf_id=event.leaf_id,
                        entry_id=event.entry_id,
                        text=text(event.text),
                        restored_files=list(event.restored_files),
                    )
                )
            case Notice(kind="retry"):
                self._retries.scheduled(event, emit, head, text)
            case Notice(kind="error"):
                emit(pub.ErrorEvent(type="error", **head(), message=text(event.text)))
            case Notice(kind="extension_error"):
                data = event.data
                emit(
                    pub.ExtensionErrorEvent(
                        type="extension_error",
                        **head(),
                        extension=str(data.get("extension", "")),
                        event=str(data.get("event", "")),
                        error=text(str(data.get("error", ""))),
                    )
                )
                emit(_notice(event, head(), text))
            case Notice(kind="interrupting"):
                pass  # a hint for people at a terminal; state_change says "interrupting"
            case Notice():
                emit(_notice(event, head(), text))
        return out


def _notice(event: Notice, head: pub.Envelope, text: Callable[[str], str]) -> pub.NoticeEvent:
    return pub.NoticeEvent(
        type="notice", **head, text=text(event.text), level=event.level, kind=event.kind
    )
