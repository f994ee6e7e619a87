"""Drawing a saved session into the transcript, as it looked when it happened.

`show_session` draws it at once (`/resume` of a session picked in the app). `ink -c` and
`-r` draw its end first (`session_tail`) and build the whole with `show_session_in_steps`,
a few milliseconds at a time, so the keys typed meanwhile are handled between steps.
A sub-agent's conversation (its `subagent` entry) is drawn under its task row, folded.

A call the file holds no result for (the session ended while it ran, or while its
approval question was open) is drawn ended, failed, with the words the history repair
answered it with for the model (`history_repair.NO_RESULT`): left as it was added, its
row kept a spinner and a clock that ran for as long as the app did.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ink_tui.core.tool_api import ToolResult
from ink_tui.session.entries import (
    AssistantEntry,
    CompactionEntry,
    Entry,
    ErrorEntry,
    InterruptEntry,
    ModelChangeEntry,
    SubagentEntry,
    ToolResultEntry,
    UserEntry,
)
from ink_tui.session.history_repair import NO_RESULT
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from ink_tui.session.session_reader import LoadedSession
    from ink_tui.ui.widgets.transcript_events import TranscriptView
    from ink_tui.ui.widgets.transcript_tasks import InnerView

# Work on the event loop between two chances for it to handle a key (half a frame).
STEP_S = 0.008
# Entries replayed between two looks at the clock (well under a millisecond of work).
_CHECK_EVERY = 8


def show_session(transcript: Transcript, loaded: LoadedSession) -> None:
    """The whole transcript of `loaded`, its warnings, and a notice that it resumed."""
    transcript.clear_view()
    replay(transcript, loaded.entries)
    _end(transcript, loaded)


async def show_session_in_steps(
    transcript: Transcript, loaded: LoadedSession, step_s: float = STEP_S
) -> None:
    """`show_session`, giving the event loop a turn every `step_s` of work."""
    transcript.clear_view()
    deadline = time.perf_counter() + step_s
    unanswered: dict[str, None] = {}
    for index, entry in enumerate(loaded.entries, start=1):
        _replay_one(transcript, entry, unanswered)
        if index % _CHECK_EVERY == 0:
            # The answers' text is taken in here, within the step: left to the
            # transcript's next frame, a step's worth of answers each frame took 30-50 ms.
            transcript.flush_now()
            if time.perf_counter() > deadline:
                await asyncio.sleep(0)
                deadline = time.perf_counter() + step_s
    _end_unanswered(transcript, unanswered)
    transcript.flush_now()
    _end(transcript, loaded)


def _end(transcript: Transcript, loaded: LoadedSession) -> None:
    for warning in loaded.warnings:
        transcript.add_notice(warning, "warning")
    transcript.add_notice(f"Resumed session {loaded.id} ({loaded.message_count} messages).")


def replay(transcript: Transcript, entries: Iterable[Entry]) -> None:
    unanswered: dict[str, None] = {}
    for entry in entries:
        _replay_one(transcript, entry, unanswered)
    _end_unanswered(transcript, unanswered)
    transcript.flush_now()


def _end_unanswered(transcript: TranscriptView, unanswered: dict[str, None]) -> None:
    """End the calls replayed without a result as the history repair answers them; no
    time is shown, since none was measured."""
    for call_id in unanswered:
        transcript.tool_finished(call_id, ToolResult(content=NO_RESULT, is_error=True), None)
    unanswered.clear()


def _replay_one(transcript: TranscriptView, entry: Entry, unanswered: dict[str, None]) -> None:
    """Draw `entry`; `unanswered` keeps the ids of the calls drawn without a result yet."""
    if isinstance(entry, UserEntry):
        prompt = entry.message
        transcript.add_user(prompt.content, prompt.kind, prompt.source, prompt.custom_type)
    elif isinstance(entry, AssistantEntry):
        reply = entry.message
        if reply.thinking:
            transcript.append_thinking(reply.thinking)
        if reply.text.strip():
            transcript.begin_answer()
            transcript.append_answer(reply.text)
            transcript.end_answer()
        for call in reply.tool_calls:
            transcript.add_tool(call)
            unanswered[call.id] = None
    elif isinstance(entry, ToolResultEntry):
        unanswered.pop(entry.message.call_id, None)
        result = ToolResult(
            content=entry.message.content,
            is_error=entry.message.is_error,
            details=dict(entry.details),
        )
        transcript.tool_finished(entry.message.call_id, result, entry.duration_s)
    elif isinstance(entry, InterruptEntry):
        transcript.add_notice("Interrupted.", "warning")
    elif isinstance(entry, ErrorEntry):
        transcript.add_notice(f"Run failed: {entry.text}", "error")
    elif isinstance(entry, CompactionEntry):
        transcript.add_compaction(
            entry.summary, entry.tokens_before, entry.tokens_after, entry.reason
        )
    elif isinstance(entry, ModelChangeEntry):
        transcript.add_notice(f"Model changed to {entry.model}.")
    elif isinstance(entry, SubagentEntry) and isinstance(transcript, Transcript):
        _replay_subagent(transcript, entry)


def _replay_subagent(transcript: Transcript, entry: SubagentEntry) -> None:
    """A sub-agent's conversation, under its task row (folded, as every row starts).

    Its entry is written when it ends, before its task call's result: the row is there
    (the parent's reply made it), and the result that follows ends it. A sub-agent's own
    sub-agent ended before it, so its entry waits until its row is drawn."""
    tasks = transcript.tasks
    view = tasks.view_for_call(entry.parent_call_id)
    if view is None:
        tasks.pending[entry.parent_call_id] = entry
    elif not view.row.children:  # else filled already
        _fill(transcript, view, entry)


def _fill(transcript: Transcript, view: InnerView, entry: SubagentEntry) -> None:
    row = view.row
    row.agent_id = entry.agent_id
    row.stop_reason = entry.stop_reason
    unanswered: dict[str, None] = {}
    for message in entry.entries:
        _replay_one(view, message, unanswered)
        if isinstance(message, AssistantEntry):
            usage = message.message.usage
            row.tokens += usage.input_tokens + usage.output_tokens
    # A sub-agent stopped mid-call (its parent cancelled, the app quit) left it so too.
    _end_unanswered(view, unanswered)
    view.end_answer()
    for call_id, block in view.tools.items():
        waiting = transcript.tasks.pending.pop(call_id, None)
        if waiting is not None and isinstance(block, TaskBlock):
            _fill(transcript, transcript.tasks.view_of(block), waiting)
    transcript.tasks.changed(row)
