"""Running the tool calls of one model reply.

Adjacent calls to concurrency-safe tools (read-only: read, ls, grep, find; and task)
form a group that runs at most `MAX_CONCURRENT` at a time (task calls: at most the
tool's `max_parallel`, in slots of their own); every other call runs alone, in order.

Events, per the run-control contract:
- `tool_start` for each call in call order, before validation;
- `tool_running` when a call starts to execute: after its checks (an approval question
  may wait there for minutes) and, in a concurrent group, once it has a slot. Its
  duration counts from here, not from either wait; a call that never runs gets none;
- `tool_settled` as each concurrent call gets its result, in completion order;
- `tool_end` for every call in call order, carrying exactly what enters the history.

Before a batch with any call that may change files (a tool not `read_only`), the
workspace is checkpointed (`ToolContext.before_batch`), once for the whole batch.

Checks before a call (`ToolContext.before_tool`: an extension's guard, later approvals)
run after validation and before the call executes, in order; the first that returns a
reason blocks the call, and the model gets the reason as its error result. A check that
raises blocks too (a broken guard must not let everything through). An abort while a
check waits ends the wait: the call is not run.

Abort: a running tool gets the signal and should return soon. One that has not returned
`grace_s` after the abort is abandoned: it gets an error result and whatever it returns
later is dropped. Calls that never started get a synthetic error result, so every call
in the reply has a result and the history stays valid for the next model call.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ink_tui.core.abort import AbortError, AbortSignal
from ink_tui.core.events import Event, ToolEnd, ToolRunning, ToolSettled, ToolStart
from ink_tui.core.messages import ToolCall, ToolResultMessage
from ink_tui.core.sentence import sentence
from ink_tui.core.tool_api import Tool, ToolContext, ToolError, ToolResult, changes_files
from ink_tui.core.validation import validation_error

MAX_CONCURRENT = 5

NOT_RUN_ABORTED = "Not run: the user interrupted the run before this call started."


@dataclass(slots=True)
class _Outcome:
    result: ToolResult
    duration_s: float = 0.0


def _abandoned(grace_s: float) -> ToolResult:
    return ToolResult.error(
        f"Did not stop within {grace_s:g} s of the interrupt; result abandoned.",
        abandoned=True,
    )


async def run_tool(tool: Tool, call: ToolCall, ctx: ToolContext, grace_s: float) -> _Outcome:
    """Run one validated call; never raises except for cancellation of the caller."""
    started = time.monotonic()
    task = asyncio.ensure_future(tool.execute(call.arguments, replace(ctx, call_id=call.id)))
    aborted = asyncio.ensure_future(ctx.signal.wait())
    try:
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            # Aborted: the tool has the signal too and should wrap up; wait a grace.
            await asyncio.wait({task}, timeout=grace_s)
    finally:
        aborted.cancel()
    if not task.done():
        # A late result or error must never reach the history or the log as unhandled.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return _Outcome(_abandoned(grace_s), time.monotonic() - started)
    return _Outcome(_result_of(task, call), time.monotonic() - started)


def _result_of(task: asyncio.Future[ToolResult], call: ToolCall) -> ToolResult:
    if task.cancelled():
        return ToolResult.error("Interrupted: the call was cancelled.")
    error = task.exception()
    if error is None:
        result = task.result()
        if not isinstance(result, ToolResult):
            return ToolResult.error(f"{call.name} returned {type(result).__name__}, not a result.")
        return result
    if isinstance(error, ToolError):
        return ToolResult.error(str(error))
    if isinstance(error, AbortError):
        return ToolResult.error(sentence(f"Interrupted: {error.reason}"))
    return ToolResult.error(f"{call.name} failed: {type(error).__name__}: {error}")


class ToolScheduler:
    def __init__(
        self,
        tools: Sequence[Tool],
        ctx: ToolContext,
        emit: Callable[[Event], None],
        grace_s: float = 10.0,
    ) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._ctx = ctx
        self._emit = emit
        self._grace_s = grace_s

    @property
    def signal(self) -> AbortSignal:
        return self._ctx.signal

    def is_concurrent(self, call: ToolCall) -> bool:
        tool = self._tools.get(call.name)
        return tool is not None and tool.concurrency_safe

    async def run(self, calls: Sequence[ToolCall]) -> list[ToolResultMessage]:
        before_batch = self._ctx.before_batch
        if before_batch is not None and any(self._changes_files(call) for call in calls):
            # An abort meanwhile: every call gets its "not run" result below, as on any.
            with contextlib.suppress(AbortError):
                await before_batch(calls, self._ctx.signal)
        messages: list[ToolResultMessage] = []
        for group in self._groups(calls):
            if len(group) > 1:
                messages.extend(await self._run_concurrent(group))
            else:
                messages.append(await self._run_alone(group[0]))
        return messages

    def _changes_files(self, call: ToolCall) -> bool:
        tool = self._tools.get(call.name)
        return tool is not None and changes_files(tool)

    def refuse(self, calls: Sequence[ToolCall], reason: str) -> list[ToolResultMessage]:
        """Give every call an error result without running it (a cut-off reply)."""
        messages = []
        for call in calls:
            self._emit(ToolStart(call=call))
            messages.append(self._end(call, _Outcome(ToolResult.error(reason, not_run=True))))
        return messages

    def _groups(self, calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
        groups: list[list[ToolCall]] = []
        for call in calls:
            if groups and self.is_concurrent(call) and self.is_concurrent(groups[-1][-1]):
                groups[-1].append(call)
            else:
                groups.append([call])
        return groups

    def _end(self, call: ToolCall, outcome: _Outcome) -> ToolResultMessage:
        message = ToolResultMessage(
            call_id=call.id,
            tool_name=call.name,
            content=outcome.result.content,
            is_error=outcome.result.is_error,
        )
        self._emit(
            ToolEnd(
                call=call, result=outcome.result, duration_s=outcome.duration_s, message=message
            )
        )
        return message

    def _not_run(self) -> _Outcome:
        return _Outcome(ToolResult.error(NOT_RUN_ABORTED, not_run=True))

    async def _check(self, call: ToolCall) -> ToolResult | None:
        """Run the checks before `call`; None lets it run, else the result it gets."""
        for check in self._ctx.before_tool:
            checking = asyncio.ensure_future(check(call, self.signal))
            aborted = asyncio.ensure_future(self.signal.wait())
            try:
                await asyncio.wait({checking, aborted}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                aborted.cancel()
            if not checking.done():
                checking.cancel()
                return self._not_run().result
            if checking.cancelled():
                return self._not_run().result
            error = checking.exception()
            if isinstance(error, AbortError):
                return self._not_run().result
            reason: str | None
            if error is not None:
                reason = (
                    f"Blocked: the check before running {call.name} failed "
                    f"({type(error).__name__}: {error}), so the call was not run."
                )
            else:
                reason = checking.result()
            if reason:
                return ToolResult.error(str(reason), blocked=True)
        return None

    async def _run_alone(self, call: ToolCall) -> ToolResultMessage:
        self._emit(ToolStart(call=call))
        if self.signal.aborted:
            return self._end(call, self._not_run())
        problem = validation_error(call, self._tools)
        if problem is not None:
            return self._end(call, _Outcome(ToolResult.error(problem, invalid=True)))
        if self._ctx.before_tool:
            refused = await self._check(call)
            if refused is not None:
                return self._end(call, _Outcome(refused))
        # Past the checks (and an approval's wait): the call runs from here.
        self._emit(ToolRunning(call_id=call.id))
        outcome = await run_tool(self._tools[call.name], call, self._ctx, self._grace_s)
        return self._end(call, outcome)

    async def _run_concurrent(self, group: list[ToolCall]) -> list[ToolResultMessage]:
        for call in group:
            self._emit(ToolStart(call=call, concurrent=True))
        outcomes: list[_Outcome | None] = [None] * len(group)
        shared = asyncio.Semaphore(MAX_CONCURRENT)
        # A tool with `max_parallel` (task: a sub-agent each) takes slots of its own, so
        # long calls of it never hold the read-only calls' slots.
        own: dict[str, asyncio.Semaphore] = {}
        for call in group:
            limit = getattr(self._tools.get(call.name), "max_parallel", None)
            if isinstance(limit, int) and call.name not in own:
                own[call.name] = asyncio.Semaphore(max(1, limit))

        async def one(index: int, call: ToolCall) -> None:
            if self._ctx.before_tool:
                refused = await self._check(call)
                if refused is not None:
                    outcomes[index] = _Outcome(refused)
                    return
            async with own.get(call.name, shared):
                if self.signal.aborted:
                    outcomes[index] = self._not_run()
                    return
                self._emit(ToolRunning(call_id=call.id))
                outcome = await run_tool(self._tools[call.name], call, self._ctx, self._grace_s)
                outcomes[index] = outcome
                self._emit(
                    ToolSettled(
                        call_id=call.id, result=outcome.result, duration_s=outcome.duration_s
                    )
                )

        tasks = []
        for index, call in enumerate(group):
            problem = validation_error(call, self._tools)
            if problem is not None:
                outcomes[index] = _Outcome(ToolResult.error(problem, invalid=True))
            else:
                tasks.append(asyncio.create_task(one(index, call)))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
        return [
            self._end(call, outcome or self._not_run())
            for call, outcome in zip(group, outcomes, strict=True)
        ]
