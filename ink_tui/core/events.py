"""Run events: everything a front end sees, one dataclass each.

`run_id` and `seq` are stamped on the way out (the controller sets the run id, the bus
the sequence number), so code that makes an event never has to know either. So are
`agent_id` and `parent_call_id` for a sub-agent's events (control/subagents.py stamps
them): the top-level agent's events leave both None.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from reprlib import recursive_repr
from typing import Any, ClassVar, Literal

from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    QueueMode,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserKind,
)
from ink_tui.core.tool_api import ToolResult

RunStopReason = Literal["completed", "aborted", "max_iterations"]
RunKind = Literal["agent", "shell", "compact"]


# Events take their `__repr__` and `__eq__` from `Event` (repr=False, eq=False), which
# behave as the ones `dataclass` generates: generated, each is compiled from source at
# import, and for 24 events that was ~4 ms of the first frame's imports.
@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class Event:
    """What every event carries: the run it belongs to and its place in the stream."""

    type: ClassVar[str] = "event"
    run_id: str | None = None
    seq: int = 0
    # Which sub-agent it came from ("agent-1") and the `task` call that started it;
    # None for the top-level agent (and for the controller's own events).
    agent_id: str | None = None
    parent_call_id: str | None = None

    # Mutable and compared by value: unhashable, as `dataclass(eq=True)` makes it.
    __hash__ = None  # type: ignore[assignment]

    @recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        compared = [f.name for f in fields(self) if f.compare]
        return tuple(getattr(self, n) for n in compared) == tuple(
            getattr(other, n) for n in compared
        )


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class RunStart(Event):
    """A run began: a prompt for the agent, a shell command, or a compaction."""

    type: ClassVar[str] = "run_start"
    kind: RunKind = "agent"
    prompt: str = ""


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class RunEnd(Event):
    """A run is over: how it stopped (or why it failed), its usage and its length."""

    type: ClassVar[str] = "run_end"
    # None when the run failed; `error` then says why.
    stop_reason: RunStopReason | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    duration_s: float = 0.0


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class TurnStart(Event):
    """A model request of the run begins (turn 1, 2, ...)."""

    type: ClassVar[str] = "turn_start"
    turn: int


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class TurnEnd(Event):
    """That model request and the tool calls it asked for are done."""

    type: ClassVar[str] = "turn_end"
    turn: int


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class UserMessageEvent(Event):
    """A user message entered the history (the prompt, or a steer / follow-up injection)."""

    type: ClassVar[str] = "user_message"
    text: str
    kind: UserKind
    # Set when an extension injected it (see `UserMessage.source`); None for the user.
    source: str | None = None
    custom_type: str | None = None
    # The message's id in the session's tree (`UserMessage.entry_id`): what a rewind to
    # it names.
    entry_id: str | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class TextDelta(Event):
    """More of the answer's text, as the model streams it."""

    type: ClassVar[str] = "text_delta"
    text: str


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ThinkingDelta(Event):
    """More of the model's thinking, as it streams."""

    type: ClassVar[str] = "thinking_delta"
    text: str


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class MessageEnd(Event):
    """The model's message, complete, as it entered the history."""

    type: ClassVar[str] = "message_end"
    message: AssistantMessage


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ToolStart(Event):
    """A tool call the model asked for begins: it is validated and checked (an approval
    question may wait there), then runs (`ToolRunning`)."""

    type: ClassVar[str] = "tool_start"
    call: ToolCall
    # True when the call is part of a concurrent group: it also waits for a slot and
    # gets tool_settled; a lone call runs as soon as its checks let it through.
    concurrent: bool = False


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ToolRunning(Event):
    """A call runs now: its checks let it through (an approval was answered) and, in a
    concurrent group, it got its slot. Its duration counts from here."""

    type: ClassVar[str] = "tool_running"
    call_id: str


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ToolSettled(Event):
    """A call of a concurrent group finished (completion order; `ToolEnd` comes in the
    order the model issued the calls)."""

    type: ClassVar[str] = "tool_settled"
    call_id: str
    result: ToolResult
    duration_s: float


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ToolEnd(Event):
    """A call's result, as it entered the history."""

    type: ClassVar[str] = "tool_end"
    call: ToolCall
    result: ToolResult
    # Time from execution start (the slot, not the wait) to the result; 0 if never run.
    duration_s: float
    # Exactly what entered the history.
    message: ToolResultMessage


ApprovalDecision = Literal["allow", "session", "always", "deny"]


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ApprovalRequest(Event):
    """A call waits for the user's yes or no (see control/approvals.py).

    Questions come one at a time, in call order; each ends with one `ApprovalResolved`.
    `rule` is what "allow for this session" and "always" would allow ("bash:pytest",
    "edit"), None when only "allow once" is offered (a command with shell syntax)."""

    type: ClassVar[str] = "approval_request"
    request_id: str
    call: ToolCall
    # Why it asks: "approval policy 'ask'", "outside the workspace", ...
    why: str
    rule: str | None = None
    rule_label: str = ""
    # write/edit: the path as shown to the model, and a unified diff of the change ("" if
    # it cannot be computed; `preview_note` then says why).
    path: str | None = None
    preview: str = ""
    preview_note: str = ""
    # A sub-agent's question: the description of its task (its `agent_id` says which).
    agent_description: str | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ApprovalResolved(Event):
    """The answer to an `ApprovalRequest`: by the user (or a program), or "deny" by an
    interrupt (`by="interrupt"`)."""

    type: ClassVar[str] = "approval_resolved"
    request_id: str
    call_id: str
    decision: ApprovalDecision
    reason: str | None = None
    by: Literal["user", "interrupt"] = "user"


SubagentStopReason = Literal["completed", "aborted", "stopped", "max_iterations", "failed"]


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class SubagentStart(Event):
    """A `task` call started a sub-agent (its `agent_id` / `parent_call_id` are set).

    Not a run of its own for front ends: the parent's run goes on around it, and only
    the parent's run settles (after every sub-agent it started has ended)."""

    type: ClassVar[str] = "subagent_start"
    description: str
    prompt: str
    # 1 for a sub-agent of the top-level agent, 2 for one of its own, ...
    depth: int = 1
    # The agent whose `task` call it is: None for the top-level agent.
    parent_agent_id: str | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class SubagentEnd(Event):
    """A sub-agent ended; `result` is what its `task` call returns to the parent.

    `stopped`: stopped on its own (`abort_agent`), the parent goes on; `aborted`: the
    whole tree was interrupted; `failed`: it raised (`error` says why)."""

    type: ClassVar[str] = "subagent_end"
    stop_reason: SubagentStopReason
    result: str
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    duration_s: float = 0.0
    description: str = ""
    # Its whole conversation, for the session file (not shown in the repr: long).
    messages: list[Message] = field(default_factory=list, repr=False)


@dataclass(slots=True, kw_only=True)
class QueueEntryView:
    """One queued input as the queue shows it."""

    id: int
    text: str
    mode: QueueMode
    shell: bool
    # "user", or the name of the extension that queued it (shown as its badge).
    source: str = "user"
    custom_type: str | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class QueueUpdate(Event):
    """The input queue changed: every entry, in order."""

    type: ClassVar[str] = "queue_update"
    entries: list[QueueEntryView]
    # Held after an interrupt (interrupt_queue = "keep") until the user resumes it.
    paused: bool = False


RunState = Literal["idle", "running", "exited"]


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class StateChange(Event):
    """The controller went idle, started running, or exited."""

    type: ClassVar[str] = "state"
    state: RunState
    interrupts: int = 0
    exit_code: int | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ServerWaiting(Event):
    """The server has sent nothing for `seconds` (the request gives up at `limit_s`).

    Repeated about every second while the silence lasts; `over` once bytes flow again.
    A retry, the next turn or the run's end also ends it.
    """

    type: ClassVar[str] = "server_waiting"
    seconds: float
    limit_s: float
    over: bool = False


NoticeLevel = Literal["info", "warning", "error"]


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class Notice(Event):
    """Something to tell the user that is not part of the conversation."""

    type: ClassVar[str] = "notice"
    text: str
    level: NoticeLevel = "info"
    # A machine-readable tag for front ends: "retry", "restored", "error", "hint", ...
    kind: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class InputRestored(Event):
    """Queued input was taken out and must go back into the editor, above any draft."""

    type: ClassVar[str] = "input_restored"
    text: str
    count: int


@dataclass(slots=True, kw_only=True)
class JobView:
    """A process a completed command left running (see ink_tui/tools/jobs.py)."""

    number: int
    pid: int
    # The process's own arguments, and the command line of the bash call that started it.
    argv: str
    command: str
    call_id: str | None
    # Seconds since the epoch; None when unknown.
    started: float | None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class JobsUpdate(Event):
    """The background jobs, all of them, after any change (one started, ended, stopped)."""

    type: ClassVar[str] = "jobs_update"
    jobs: list[JobView]


CompactionReason = Literal["threshold", "manual", "overflow"]


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class CompactionStart(Event):
    """The older part of the conversation is being summarised to fit the context window.

    `reason`: the next request would pass `compact_at` of the window ("threshold"), the
    user asked (/compact, "manual"), or the server said the request was too long
    ("overflow"). Tokens are estimates of the next request (see core/context_window.py).
    """

    type: ClassVar[str] = "compaction_start"
    reason: CompactionReason
    tokens_before: int
    context_window: int | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class CompactionEnd(Event):
    """Compaction finished: done (`summary` set), aborted, or failed (`error` set).

    When done, the history sent to the model is the summary plus the messages from
    `end` on, counting in the whole conversation; `first`..`end` is what this compaction
    summarised afresh (anything before `first` was already in an earlier summary, which
    this one includes). A failed or aborted compaction changed nothing.
    """

    type: ClassVar[str] = "compaction_end"
    reason: CompactionReason
    tokens_before: int
    tokens_after: int = 0
    summary: str = ""
    first: int = 0
    end: int = 0
    aborted: bool = False
    error: str | None = None

    @property
    def done(self) -> bool:
        return not self.aborted and self.error is None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class CheckpointTaken(Event):
    """The workspace's files were checkpointed before a tool batch that may change them
    (`commit` in the checkpoint store): what a rewind of files goes back to."""

    type: ClassVar[str] = "checkpoint"
    commit: str


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class Rewound(Event):
    """The session went back (idle only): the history is now the branch ending at
    `leaf_id`; `text` is the message rewound to (for the editor), `restored_files` the
    files a file restore changed. `restore` as in the session's `rewind` entry."""

    type: ClassVar[str] = "rewound"
    restore: str
    leaf_id: str | None
    entry_id: str | None = None
    text: str = ""
    restored_files: list[str] = field(default_factory=list)


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ContextUsage(Event):
    """How full the model's context is: the last request's tokens as the provider
    reported them (input + output), or the estimate after a compaction."""

    type: ClassVar[str] = "context_usage"
    tokens: int
    # None when the model's window is not known (no config, default or server value).
    context_window: int | None = None
