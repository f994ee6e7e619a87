"""The public event protocol: what programs see of a session, written once.

The Python API, RPC mode and the HTTP service all speak these events, so they cannot
drift apart. Each is a JSON-ready dict with `type`, `v` (the protocol version), the
session's id, its own increasing `seq` (per session, no gaps) and the `run_id` of the run
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
| approval_request / _resolved   | same (a call waits for the user's yes; the answer) |
| compaction_start / _end        | same (older conversation summarised to fit the window) |
| error                          | the "run failed" notice        |
| extension_error                | a failed extension handler (its notice follows) |
| notice                         | every other notice             |

"Done" is `agent_settled`: the queue has been flushed or restored and the session is
idle. A prompt may contain several runs (entries still queued when a run completes start
runs of their own), each with `agent_start` / `agent_end`; `agent_settled` comes once, at
the end of the last.

Tool arguments and results pass through `redact`, which front ends that serve remote
clients replace (the HTTP service masks secrets and reduces arguments); local front ends
keep them whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

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
    QueueEntryView,
    QueueUpdate,
    RunEnd,
    RunStart,
    ServerWaiting,
    StateChange,
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
from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ink_tui.core.tool_summary import summary_line

PROTOCOL_VERSION = 1

PublicEvent = dict[str, Any]

# Every public event type, in the order docs/events.md describes them.
PUBLIC_EVENT_TYPES = (
    "agent_start",
    "turn_start",
    "user_message",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_running",
    "tool_execution_settled",
    "tool_execution_end",
    "turn_end",
    "queue_update",
    "auto_retry_start",
    "auto_retry_end",
    "agent_end",
    "state_change",
    "agent_settled",
    "input_restored",
    "server_waiting",
    "jobs_update",
    "approval_request",
    "approval_resolved",
    "compaction_start",
    "compaction_end",
    "error",
    "extension_error",
    "notice",
)


def queue_entries(entries: list[QueueEntryView]) -> list[dict[str, Any]]:
    return [
        {
            "id": e.id,
            "text": e.text,
            "mode": e.mode,
            "shell": e.shell,
            "source": e.source,
            "custom_type": e.custom_type,
        }
        for e in entries
    ]


def usage_dict(usage: Usage) -> dict[str, int]:
    return asdict(usage)


def message_dict(message: AssistantMessage) -> dict[str, Any]:
    return {
        "role": "assistant",
        "text": message.text,
        "thinking": message.thinking,
        "tool_calls": [call_dict(c) for c in message.tool_calls],
        "finish_reason": message.finish_reason,
        "usage": usage_dict(message.usage),
        "model": message.model,
    }


def call_dict(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def history_dict(message: Message) -> dict[str, Any]:
    """One message of the conversation as the model has it."""
    match message:
        case UserMessage():
            user: dict[str, Any] = {
                "role": "user",
                "kind": message.kind,
                "content": message.content,
            }
            if message.source is not None:
                user["source"] = message.source
                user["custom_type"] = message.custom_type
            if isinstance(message, SummaryMessage):
                # The summary a compaction put in place of the older messages.
                user["kind"] = "summary"
            return user
        case AssistantMessage():
            return message_dict(message)
        case ToolResultMessage():
            return {
                "role": "tool",
                "call_id": message.call_id,
                "tool_name": message.tool_name,
                "content": message.content,
                "is_error": message.is_error,
            }


class PublicProjection:
    """Turns one session's internal events into public ones (stateful: retries, settle).

    `redact_call` maps a tool call's arguments to what may be shown (identity by
    default); `redact_text` is applied to every text that may carry a secret.
    """

    def __init__(
        self,
        session_id: str,
        *,
        redact_call: Callable[[ToolCall], dict[str, Any]] | None = None,
        redact_text: Callable[[str], str] | None = None,
    ) -> None:
        self.session_id = session_id
        self.seq = 0
        self._redact_call = redact_call or (lambda call: call.arguments)
        self._redact_text = redact_text or (lambda text: text)
        self.state = "idle"
        self._retrying: dict[str, Any] | None = None
        self._last_end: dict[str, Any] | None = None
        self._restored: list[dict[str, Any]] = []

    def project(self, event: Event) -> list[PublicEvent]:
        out: list[PublicEvent] = []
        run_id = event.run_id

        def emit(public_type: str, /, **data: Any) -> None:
            self.seq += 1
            out.append(
                {
                    "type": public_type,
                    "v": PROTOCOL_VERSION,
                    "session_id": self.session_id,
                    "seq": self.seq,
                    "run_id": run_id,
                    **data,
                }
            )

        if self._retrying is not None and _is_sign_of_life(event):
            emit("auto_retry_end", success=True, attempt=self._retrying["attempt"] + 1)
            self._retrying = None
        text = self._redact_text
        match event:
            case RunStart():
                self._last_end = None
                emit("agent_start", kind=event.kind, prompt=text(event.prompt))
            case TurnStart():
                emit("turn_start", turn=event.turn)
            case TurnEnd():
                emit("turn_end", turn=event.turn)
            case UserMessageEvent():
                emit(
                    "user_message",
                    text=text(event.text),
                    kind=event.kind,
                    source=event.source or "user",
                    custom_type=event.custom_type,
                )
            case TextDelta():
                emit("message_update", delta={"type": "text", "text": text(event.text)})
            case ThinkingDelta():
                emit("message_update", delta={"type": "thinking", "text": text(event.text)})
            case MessageEnd():
                message = message_dict(event.message)
                message["text"] = text(message["text"])
                message["tool_calls"] = [
                    {**call_dict(c), "arguments": self._redact_call(c)}
                    for c in event.message.tool_calls
                ]
                emit("message_end", message=message)
            case ToolStart():
                emit(
                    "tool_execution_start",
                    call_id=event.call.id,
                    tool_name=event.call.name,
                    arguments=self._redact_call(event.call),
                    concurrent=event.concurrent,
                )
            case ToolRunning():
                emit("tool_execution_running", call_id=event.call_id)
            case ToolSettled():
                emit(
                    "tool_execution_settled",
                    call_id=event.call_id,
                    is_error=event.result.is_error,
                    duration_s=round(event.duration_s, 3),
                )
            case ToolEnd():
                shown_call = replace(event.call, arguments=self._redact_call(event.call))
                emit(
                    "tool_execution_end",
                    call_id=event.call.id,
                    tool_name=event.call.name,
                    is_error=event.result.is_error,
                    content=text(event.message.content),
                    # From the shown arguments: the summary names the call's main
                    # argument (a bash command), which a remote front end may withhold.
                    summary=text(summary_line(shown_call, event.result, event.duration_s)),
                    duration_s=round(event.duration_s, 3),
                )
            case QueueUpdate():
                emit("queue_update", entries=queue_entries(event.entries), paused=event.paused)
            case RunEnd():
                if self._retrying is not None:
                    emit("auto_retry_end", success=False, attempt=self._retrying["attempt"] + 1)
                    self._retrying = None
                stop = event.stop_reason or "failed"
                self._last_end = {
                    "stop_reason": stop,
                    "error": text(event.error) if event.error else None,
                }
                emit(
                    "agent_end",
                    will_retry=False,
                    **self._last_end,
                    usage=usage_dict(event.usage),
                    turns=event.turns,
                    duration_s=round(event.duration_s, 3),
                )
            case StateChange():
                self._on_state(event, emit)
            case InputRestored():
                restored = {"text": text(event.text), "count": event.count}
                if self._last_end is not None:
                    # Handed back by the settle of an aborted or failed run.
                    self._restored.append(restored)
                emit("input_restored", **restored)
            case ServerWaiting():
                emit(
                    "server_waiting",
                    seconds=round(event.seconds, 1),
                    limit_s=event.limit_s,
                    over=event.over,
                )
            case JobsUpdate():
                emit("jobs_update", jobs=[asdict(job) for job in event.jobs])
            case ApprovalRequest():
                emit(
                    "approval_request",
                    request_id=event.request_id,
                    call_id=event.call.id,
                    tool_name=event.call.name,
                    arguments=self._redact_call(event.call),
                    why=event.why,
                    rule=event.rule,
                    path=event.path,
                    preview=text(event.preview),
                    preview_note=text(event.preview_note),
                    decisions=["allow", "session", "always", "deny"]
                    if event.rule is not None
                    else ["allow", "deny"],
                )
            case ApprovalResolved():
                emit(
                    "approval_resolved",
                    request_id=event.request_id,
                    call_id=event.call_id,
                    decision=event.decision,
                    reason=text(event.reason) if event.reason else None,
                    by=event.by,
                )
            case CompactionStart():
                emit(
                    "compaction_start",
                    reason=event.reason,
                    tokens_before=event.tokens_before,
                    context_window=event.context_window,
                )
            case CompactionEnd():
                emit(
                    "compaction_end",
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
            case Notice(kind="retry"):
                data = event.data
                reason = text(str(data.get("reason", "")))
                self._retrying = {"attempt": int(data.get("attempt", 0))}
                emit("agent_end", will_retry=True, stop_reason=None, error=reason)
                emit(
                    "auto_retry_start",
                    attempt=int(data.get("attempt", 0)) + 1,
                    max_attempts=int(data.get("max_attempts", 0)),
                    delay_s=round(float(data.get("delay", 0.0)), 3),
                    reason=reason,
                )
            case Notice(kind="error"):
                emit("error", message=text(event.text))
            case Notice(kind="extension_error"):
                data = event.data
                emit(
                    "extension_error",
                    extension=str(data.get("extension", "")),
                    event=str(data.get("event", "")),
                    error=text(str(data.get("error", ""))),
                )
                emit("notice", text=text(event.text), level=event.level, kind=event.kind)
            case Notice(kind="interrupting"):
                pass  # a hint for people at a terminal; state_change says "interrupting"
            case Notice():
                emit("notice", text=text(event.text), level=event.level, kind=event.kind)
        return out

    def _on_state(self, event: StateChange, emit: Callable[..., None]) -> None:
        state = event.state
        if state == "running" and event.interrupts > 0:
            state = "interrupting"
        was_busy = self.state in ("running", "interrupting")
        if state != self.state:
            self.state = state
            emit("state_change", state=state, exit_code=event.exit_code)
        if was_busy and state in ("idle", "exited"):
            end = self._last_end or {"stop_reason": "aborted", "error": None}
            restored = self._restored
            self._restored = []
            emit(
                "agent_settled",
                **end,
                restored_text="\n\n".join(r["text"] for r in restored) or None,
                restored_count=sum(r["count"] for r in restored),
            )
            self._last_end = None


def _is_sign_of_life(event: Event) -> bool:
    """After a retry was scheduled, these show the next attempt got through."""
    return isinstance(event, TextDelta | ThinkingDelta | MessageEnd | ToolStart)
