"""The bus subscriber that writes a session as the run happens.

It turns run events into session entries (see `session_writer` for the file format):

- `UserMessageEvent`: a user message entered the history (prompt, steer, follow-up);
- `MessageEnd`: an assistant message ended (partial ones on abort included, since the
  loop keeps them in the history too);
- `ToolEnd`: a tool result entered the history, with its display data;
- `CompactionEnd` (done): a compaction entry with the summary and the range it replaced;
- `RunEnd`: aborted -> an interrupt entry; failed (no stop reason) -> an error entry;
- `TurnEnd` and `RunEnd`: fsync, so a finished turn survives even a power cut;
- `CheckpointTaken`: a `checkpoint` entry (the files before a tool batch);
- `SubagentEnd`: a `subagent` entry with that sub-agent's whole conversation (nothing
  else of a sub-agent is recorded: it is not the parent's history);
- `StateChange` to "exited": wait until everything recorded is in the file (below).

The writer does its disk work on its own thread, so none of this waits for the disk on
the caller's event loop, except at "exited": print mode's second Ctrl+C leaves through
`os._exit`, which would drop whatever the writer's thread still has queued. This
subscriber must come before that one on the bus (it is subscribed first), and the
wait is for writes only, not an fsync: a process exit does not lose written data.

Shell (`!`) runs never reach the model, so nothing of them is recorded. Their tool
events look like any other, hence the run kind is remembered per run id from `RunStart`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ink_tui.core.events import (
    CheckpointTaken,
    CompactionEnd,
    Event,
    MessageEnd,
    RunEnd,
    RunKind,
    RunStart,
    StateChange,
    SubagentEnd,
    ToolEnd,
    TurnEnd,
    UserMessageEvent,
)
from ink_tui.core.messages import AssistantMessage, ToolResultMessage, UserMessage
from ink_tui.session.entries import (
    AssistantEntry,
    CompactionEntry,
    SubagentEntry,
    ToolResultEntry,
    UserEntry,
)

if TYPE_CHECKING:
    from ink_tui.session.session_writer import SessionWriter


class SessionRecorder:
    """`bus.subscribe(SessionRecorder(writer))`. Events after the writer closed are ignored."""

    def __init__(self, writer: SessionWriter) -> None:
        self.writer = writer
        self._run_kinds: dict[str | None, RunKind] = {}

    def __call__(self, event: Event) -> None:
        if self.writer.closed:
            return
        if event.agent_id is not None:
            # A sub-agent's history is not the parent's: one `subagent` entry at its end
            # holds it (for the transcript); the parent's has its task call and result.
            if isinstance(event, SubagentEnd):
                self.writer.record_subagent(subagent_entry(event))
            return
        if isinstance(event, RunStart):
            self._run_kinds[event.run_id] = event.kind
            return
        # A run we did not see start (subscribed mid-run) can only be an agent run:
        # shell runs are too short-lived to be joined halfway in practice, and dropping
        # real conversation would be the worse mistake.
        shell = self._run_kinds.get(event.run_id) == "shell"
        match event:
            case UserMessageEvent() if not shell:
                self.writer.record_user(
                    UserMessage(
                        content=event.text,
                        kind=event.kind,
                        source=event.source,
                        custom_type=event.custom_type,
                        entry_id=event.entry_id,
                    )
                )
            case CheckpointTaken():
                self.writer.record_checkpoint(event.commit)
            case MessageEnd() if not shell:
                self.writer.record_assistant(event.message)
            case ToolEnd() if not shell:
                self.writer.record_tool_result(
                    event.message, event.result.details, event.duration_s
                )
            case CompactionEnd() if event.done:
                self.writer.record_compaction(
                    CompactionEntry(
                        summary=event.summary,
                        first=event.first,
                        end=event.end,
                        reason=event.reason,
                        tokens_before=event.tokens_before,
                        tokens_after=event.tokens_after,
                    )
                )
                # A summary cost a model call: keep it even if the power goes next.
                self.writer.sync()
            case TurnEnd():
                self.writer.sync()
            case RunEnd():
                self._run_kinds.pop(event.run_id, None)
                if not shell:
                    if event.stop_reason == "aborted":
                        self.writer.record_interrupt()
                    elif event.stop_reason is None:
                        self.writer.record_error(event.error or "the run failed")
                self.writer.sync()
            case StateChange(state="exited"):
                self.writer.drain()


def subagent_entry(end: SubagentEnd) -> SubagentEntry:
    entries: list[UserEntry | AssistantEntry | ToolResultEntry] = []
    for message in end.messages:
        if isinstance(message, AssistantMessage):
            entries.append(AssistantEntry(message))
        elif isinstance(message, ToolResultMessage):
            entries.append(ToolResultEntry(message))
        elif isinstance(message, UserMessage):
            entries.append(UserEntry(message))
    return SubagentEntry(
        agent_id=end.agent_id or "",
        parent_call_id=end.parent_call_id or "",
        description=end.description,
        stop_reason=end.stop_reason,
        entries=entries,
    )
