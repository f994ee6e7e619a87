"""The public events' shapes: what programs read, one TypedDict per event.

`public_events.PublicProjection` builds them; the Python API (`AgentSession.subscribe`,
`events()`), RPC mode and `ink serve` hand them on. docs/events.md describes each, and
tests/test_events_doc.py checks its examples against these keys. A key marked
`NotRequired` is present in some events of the type only (`agent_end`'s totals come with
the run's end, not with a retried attempt's).

Every event has the envelope's keys, then its own. Programs can tell the type apart by
`event["type"]`, which a type checker narrows on:

    def on_event(event: PublicEvent) -> None:
        if event["type"] == "agent_settled":
            print(event["stop_reason"], event["restored_count"])
"""

# No `from __future__ import annotations`: on Python 3.11 a TypedDict reads
# `NotRequired` only from evaluated annotations, so `__optional_keys__` would be empty.
from typing import Any, Final, Literal, NotRequired, TypedDict

from ink_tui.core.events import (
    ApprovalDecision,
    CompactionReason,
    NoticeLevel,
    RunKind,
    RunState,
    RunStopReason,
    SubagentStopReason,
)
from ink_tui.core.messages import QueueMode, StopReason, UserKind

# The `v` of every event (and of `ink serve`'s replay_gap): raised when a key changes
# meaning or goes away, not when one is added.
PROTOCOL_VERSION: Final = 1

# Every public event type, in the order docs/events.md describes them.
PUBLIC_EVENT_TYPES: Final = (
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
    "subagent_start",
    "subagent_end",
    "approval_request",
    "approval_resolved",
    "compaction_start",
    "compaction_end",
    "rewound",
    "error",
    "extension_error",
    "notice",
)

# The run's state as programs see it: "interrupting" is a running run being stopped.
PublicState = Literal[RunState, "interrupting"]
# How a run ended; "failed" when it raised (its `error` says why).
EndReason = Literal[RunStopReason, "failed"]


class Envelope(TypedDict):
    """The keys every event has besides `type`."""

    v: int
    session_id: str
    # Per session, increasing by one with each event: a gap means something was missed.
    seq: int
    # The run it belongs to ("run-1", ...), None between runs.
    run_id: str | None
    # On every event of a sub-agent, and on no other: which one ("agent-1") and the id
    # of the `task` call that started it. Its events carry the parent's `run_id`.
    agent_id: NotRequired[str]
    parent_call_id: NotRequired[str]


# -- what events carry ----------------------------------------------------------------


class UsageInfo(TypedDict):
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cached_tokens: int


class AssistantToolCall(TypedDict):
    id: str
    name: str
    arguments: dict[str, Any]


class AssistantMessageInfo(TypedDict):
    """The model's message, in `message_end` and in the history."""

    role: Literal["assistant"]
    text: str
    thinking: str
    tool_calls: list[AssistantToolCall]
    finish_reason: StopReason
    usage: UsageInfo
    model: str


class UserMessageInfo(TypedDict):
    """A user message in the history; "summary" is what a compaction put in place of
    the older messages."""

    role: Literal["user"]
    kind: Literal[UserKind, "summary"]
    content: str
    # Only for a message an extension injected: its name, and what it says it is.
    source: NotRequired[str]
    custom_type: NotRequired[str | None]
    # Its id in the session's tree (rewind, fork); not for a compaction's summary.
    entry_id: NotRequired[str]


class ToolResultInfo(TypedDict):
    role: Literal["tool"]
    call_id: str
    tool_name: str
    content: str
    is_error: bool


# One message of the conversation as the model has it (`AgentSession.messages`).
HistoryMessage = UserMessageInfo | AssistantMessageInfo | ToolResultInfo


class TextDeltaInfo(TypedDict):
    type: Literal["text", "thinking"]
    text: str


class QueueEntryInfo(TypedDict):
    id: int
    text: str
    mode: QueueMode
    shell: bool
    # "user", or the name of the extension that queued it.
    source: str
    custom_type: str | None


class JobInfo(TypedDict):
    number: int
    pid: int
    # The process's own arguments and the command line that started it; `ink serve`
    # leaves both out unless it shows arguments.
    argv: NotRequired[str]
    command: NotRequired[str]
    call_id: str | None
    # Seconds since the epoch; None when unknown.
    started: float | None


# -- a session's state ------------------------------------------------------------------


class QueuedInputInfo(TypedDict):
    id: int
    text: str
    mode: QueueMode
    # "user", or the name of the extension that queued it.
    source: str


class SessionState(TypedDict):
    """What RPC `get_state` and `AgentSession.snapshot()` report, and `ink serve`'s
    session state (without `session_file`, with `last_seq`). docs/rpc.md lists it."""

    session_id: str
    session_file: str | None
    model: str
    demo: bool
    busy: bool
    state: PublicState
    steering_mode: Literal["all", "one-at-a-time"]
    follow_up_mode: Literal["all", "one-at-a-time"]
    message_count: int
    queue: list[QueuedInputInfo]
    queue_paused: bool
    # The approval policy, and the questions open now (request ids).
    approval: Literal["ask", "edits", "auto"]
    approvals_open: list[str]
    # What the run waits for: "approval" while a question is open (a tool call waits
    # for the user's answer), None otherwise.
    waiting: Literal["approval"] | None


# -- the events -------------------------------------------------------------------------


class AgentStartEvent(Envelope):
    type: Literal["agent_start"]
    kind: RunKind
    prompt: str


class TurnStartEvent(Envelope):
    type: Literal["turn_start"]
    turn: int


class UserMessageEvent(Envelope):
    type: Literal["user_message"]
    text: str
    kind: UserKind
    # "user", or the extension that sent it (with its `custom_type`).
    source: str
    custom_type: str | None
    # Its id in the session's tree: what `rewind` and `fork` take.
    entry_id: str | None


class MessageUpdateEvent(Envelope):
    type: Literal["message_update"]
    delta: TextDeltaInfo


class MessageEndEvent(Envelope):
    type: Literal["message_end"]
    message: AssistantMessageInfo


class ToolExecutionStartEvent(Envelope):
    type: Literal["tool_execution_start"]
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    concurrent: bool


class ToolExecutionRunningEvent(Envelope):
    type: Literal["tool_execution_running"]
    call_id: str


class ToolExecutionSettledEvent(Envelope):
    type: Literal["tool_execution_settled"]
    call_id: str
    is_error: bool
    duration_s: float


class ToolExecutionEndEvent(Envelope):
    type: Literal["tool_execution_end"]
    call_id: str
    tool_name: str
    is_error: bool
    # What the model gets.
    content: str
    summary: str
    duration_s: float


class TurnEndEvent(Envelope):
    type: Literal["turn_end"]
    turn: int


class QueueUpdateEvent(Envelope):
    type: Literal["queue_update"]
    entries: list[QueueEntryInfo]
    paused: bool


class AutoRetryStartEvent(Envelope):
    type: Literal["auto_retry_start"]
    # The attempt about to run.
    attempt: int
    max_attempts: int
    delay_s: float
    reason: str


class AutoRetryEndEvent(Envelope):
    type: Literal["auto_retry_end"]
    success: bool
    attempt: int


class AgentEndEvent(Envelope):
    type: Literal["agent_end"]
    will_retry: bool
    # None for an attempt that will be retried.
    stop_reason: EndReason | None
    error: str | None
    # At the run's end only.
    usage: NotRequired[UsageInfo]
    turns: NotRequired[int]
    duration_s: NotRequired[float]


class StateChangeEvent(Envelope):
    type: Literal["state_change"]
    state: PublicState
    exit_code: int | None


class AgentSettledEvent(Envelope):
    type: Literal["agent_settled"]
    # Of the last run.
    stop_reason: EndReason
    error: str | None
    restored_text: str | None
    restored_count: int


class InputRestoredEvent(Envelope):
    type: Literal["input_restored"]
    # The entries, joined by blank lines.
    text: str
    count: int


class ServerWaitingEvent(Envelope):
    type: Literal["server_waiting"]
    seconds: float
    limit_s: float
    over: bool


class JobsUpdateEvent(Envelope):
    type: Literal["jobs_update"]
    jobs: list[JobInfo]


class SubagentStartEvent(Envelope):
    """A `task` call started a sub-agent (`agent_id`, `parent_call_id`): not a run."""

    type: Literal["subagent_start"]
    description: str
    prompt: str
    depth: int
    # The agent whose task call it is; None for the top-level agent.
    parent_agent_id: str | None


class SubagentEndEvent(Envelope):
    type: Literal["subagent_end"]
    # Its subagent_start's, so a client that joined since can still name it.
    description: str
    stop_reason: SubagentStopReason
    # What its task call returns to the parent.
    result: str
    error: str | None
    usage: UsageInfo
    turns: int
    duration_s: float


class ApprovalRequestEvent(Envelope):
    type: Literal["approval_request"]
    request_id: str
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    why: str
    rule: str | None
    path: str | None
    preview: str
    preview_note: str
    decisions: list[ApprovalDecision]
    # A sub-agent's question: the description of its task (with its `agent_id`).
    agent_description: NotRequired[str]


class ApprovalResolvedEvent(Envelope):
    type: Literal["approval_resolved"]
    request_id: str
    call_id: str
    decision: ApprovalDecision
    reason: str | None
    by: Literal["user", "interrupt"]


class CompactionStartEvent(Envelope):
    type: Literal["compaction_start"]
    reason: CompactionReason
    tokens_before: int
    context_window: int | None


class CompactionEndEvent(Envelope):
    type: Literal["compaction_end"]
    reason: CompactionReason
    done: bool
    aborted: bool
    error: str | None
    tokens_before: int
    tokens_after: int
    summary: str
    first: int
    end: int


class ErrorEvent(Envelope):
    type: Literal["error"]
    message: str


class ExtensionErrorEvent(Envelope):
    type: Literal["extension_error"]
    extension: str
    event: str
    error: str


class RewoundEvent(Envelope):
    """The session went back (RPC `rewind`, `navigate_tree`, `undo_rewind`, the TUI's
    /rewind and /tree): the history is now the branch ending at `leaf_id`."""

    type: Literal["rewound"]
    restore: Literal["conversation", "files", "both", "undo", "tree"]
    leaf_id: str | None
    entry_id: str | None
    text: str
    restored_files: list[str]


class NoticeEvent(Envelope):
    type: Literal["notice"]
    text: str
    level: NoticeLevel
    kind: str


PublicEvent = (
    AgentStartEvent
    | TurnStartEvent
    | UserMessageEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionRunningEvent
    | ToolExecutionSettledEvent
    | ToolExecutionEndEvent
    | TurnEndEvent
    | QueueUpdateEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | AgentEndEvent
    | StateChangeEvent
    | AgentSettledEvent
    | InputRestoredEvent
    | ServerWaitingEvent
    | JobsUpdateEvent
    | SubagentStartEvent
    | SubagentEndEvent
    | ApprovalRequestEvent
    | ApprovalResolvedEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | RewoundEvent
    | ErrorEvent
    | ExtensionErrorEvent
    | NoticeEvent
)


class ReplayGapEvent(TypedDict):
    """`ink serve`'s stream only (docs/serve.md): events after `last_event_id` are no
    longer buffered (trimmed, or sent by an earlier process); reload the session's state
    and messages from `reload`. It has no `seq` of its own."""

    type: Literal["replay_gap"]
    v: int
    session_id: str
    run_id: None
    last_event_id: int
    oldest_seq: int
    last_seq: int
    # The seqs this stream will not send (inclusive): the reloaded state holds them. None
    # when `last_event_id` is newer than anything this session sent.
    missing_first: int | None
    missing_last: int | None
    # Where the state and messages to start again from are: GET it.
    reload: str
