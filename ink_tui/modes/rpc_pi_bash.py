"""pi's `bash` and `compact` commands: run one thing on an idle session, answer with it.

Both start a run of their own on an idle session (a `!` line; a compaction) and answer
once that run has ended, with what it did in pi's shape: `BashResult` and
`CompactionResult`. As in `rpc_bash`, the answer is taken from that run's own events
(the first run that starts after the watch is subscribed: the session was idle, so no
other can start before it), never from another's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ink_tui.core.events import CompactionEnd, Event, RunEnd, RunStart, ToolEnd

if TYPE_CHECKING:
    from ink_tui.api.session import AgentSession


class _RunWatch:
    """The first run that starts after it is subscribed: its last tool end, its
    compaction's end, and its end."""

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.tool_end: ToolEnd | None = None
        self.compaction: CompactionEnd | None = None
        self.ended: asyncio.Future[RunEnd] = asyncio.get_running_loop().create_future()

    def __call__(self, event: Event) -> None:
        if self.run_id is None:
            if isinstance(event, RunStart):
                self.run_id = event.run_id
            return
        if event.run_id != self.run_id or event.agent_id is not None:
            return
        if isinstance(event, ToolEnd):
            self.tool_end = event
        elif isinstance(event, CompactionEnd):
            self.compaction = event
        elif isinstance(event, RunEnd) and not self.ended.done():
            self.ended.set_result(event)


async def _watched(session: AgentSession, start: Callable[[], asyncio.Future[Any]]) -> _RunWatch:
    """Subscribe a watch, call `start()` (which returns the settling future), wait
    for the run's end, or the session's settling if the run never got to end."""
    watch = _RunWatch()
    unsubscribe = session.controller.bus.subscribe(watch)
    try:
        settled = start()
        waits: set[asyncio.Future[Any]] = {watch.ended, settled}
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        unsubscribe()
    if not watch.ended.done():
        watch.ended.cancel()
    return watch


async def run_bash(session: AgentSession, command: str) -> dict[str, Any]:
    """pi's `BashResult` for `command` run as a `!` line on an idle session."""
    watch = await _watched(session, lambda: session.start("!" + command))
    end = watch.tool_end
    stopped = watch.ended.done() and watch.ended.result().stop_reason == "aborted"
    if end is None:
        return {"output": "", "cancelled": True, "truncated": False}
    details = end.result.details
    cancelled = stopped or bool(details.get("interrupted")) or bool(details.get("timed_out"))
    result: dict[str, Any] = {
        "output": shown_output(end.message.content, truncated=bool(details.get("truncated"))),
        "cancelled": cancelled,
        "truncated": bool(details.get("truncated")),
    }
    # pi leaves the exit code out for a command that was killed.
    if not cancelled and details.get("exit_code") is not None:
        result["exitCode"] = details["exit_code"]
    if details.get("full_output_path"):
        result["fullOutputPath"] = str(details["full_output_path"])
    return result


def shown_output(content: str, *, truncated: bool) -> str:
    """The command's own output from the bash tool's result: ink's tool ends it with a
    paragraph for the model (the exit code; before it, a cut note when cut short)."""
    parts = content.split("\n\n")
    if len(parts) > 1:
        parts.pop()  # "exit code N", "interrupted; ...", "timed out after ..."
    if truncated and len(parts) > 1 and parts[-1].startswith("[output cut:"):
        parts.pop()
    text = "\n\n".join(parts)
    return "" if text == "(no output)" else text


async def run_compaction(session: AgentSession, instructions: str) -> dict[str, Any] | str:
    """pi's `CompactionResult`, or the reason there is none (an error to answer)."""

    def start() -> asyncio.Future[Any]:
        if not session.controller.compact(instructions):
            raise RuntimeError("busy: a run is in progress; compact when idle")
        settled = session.wait_settled()
        return asyncio.ensure_future(settled)

    watch = await _watched(session, start)
    end = watch.compaction
    if end is None:
        return "the compaction did not run"
    if end.aborted:
        return "the compaction was aborted"
    if not end.done:
        return end.error or "nothing to compact"
    return {
        "summary": end.summary,
        # ink names no kept entry: the summary stands for messages first..end.
        "firstKeptEntryId": None,
        "tokensBefore": end.tokens_before,
        "estimatedTokensAfter": end.tokens_after,
        "details": {"first": end.first, "end": end.end},
    }
