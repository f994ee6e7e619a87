"""Sub-agents: what a `task` call starts, and the run control of each one.

A `task` call (tools/task.py) runs an `AgentLoop` of its own: a fresh history (the
parent's conversation is not sent), the controller's workspace, provider, tool gate
(extensions' checks, then approvals, asked with the sub-agent named) and tools (less
`task` once `max_depth` is reached), the run's iteration limit, its own compaction.

- Events: every event of a sub-agent is stamped with its `agent_id` and
  `parent_call_id` (the `task` call) on the way out, then goes on the controller's bus
  with the parent's run id. It starts with `SubagentStart` and ends with one
  `SubagentEnd`; nothing of it is published after that (a late event of an abandoned
  one is dropped). It never emits `RunStart`, `RunEnd` or a state change: only the
  top-level run settles.
- Aborts form a tree: each sub-agent has its own `AbortController`, fired by its
  parent's signal (Ctrl+C reaches every sub-agent's stream and processes) or on its
  own (`stop`: only it stops; its `task` call returns "stopped by the user" with what
  it had, and the parent goes on).
- Input: each has its own queue, polled by its own loop under the run's steering and
  follow-up modes, exactly as the top-level loop polls the controller's. Input for an
  agent that is not running is refused with `AgentGone` (nothing was queued: the
  caller still has the text); entries its loop never took come back to the editor
  (`InputRestored`) when it ends, never dropped.
- Ending: a sub-agent ends when its loop returns, or is ended by its parent (`close`)
  when the parent's tool step gave up on it (the abort grace ran out): its children end
  first, so a parent always ends after every sub-agent under it, and the top-level
  `agent_settled` after all of them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from ink_tui.control.agent_setup import AgentSetup, tool_context
from ink_tui.control.approvals import AgentTag
from ink_tui.control.input_queue import InputQueue, QueueEntry, TakeMode, is_shell_line
from ink_tui.control.queue_commands import queue_views
from ink_tui.control.run_inputs import message_of
from ink_tui.control.settling import describe_error
from ink_tui.core.abort import AbortController
from ink_tui.core.compaction import CompactionBackoff
from ink_tui.core.events import (
    Event,
    InputRestored,
    Notice,
    QueueUpdate,
    SubagentEnd,
    SubagentStart,
    SubagentStopReason,
)
from ink_tui.core.loop import AgentLoop, LoopResult
from ink_tui.core.messages import AssistantMessage, Message, QueueMode, Usage, UserMessage
from ink_tui.core.tool_api import Tool, ToolContext, ToolResult
from ink_tui.tools.task import DEFAULT_MAX_DEPTH, DEFAULT_MAX_PARALLEL, TaskTool

log = logging.getLogger(__name__)

STOPPED = "stopped by the user"

SUBAGENT_NOTE = (
    "\n\nYou are a sub-agent: another agent delegated one task to you, and only your "
    "final answer goes back to it (it does not see your other messages or tool calls). "
    "End with a complete, self-contained answer: what you found or did, with the paths "
    "and facts it needs."
)


class AgentGone(LookupError):
    """No running sub-agent has that id (it ended, or never existed)."""


@dataclass(eq=False)
class RunningAgent:
    """One sub-agent, from its `SubagentStart` to its `SubagentEnd`."""

    agent_id: str
    description: str
    prompt: str
    parent_call_id: str
    parent_agent_id: str | None
    depth: int
    abort: AbortController
    emit_out: Callable[[Event], None]
    started: float = field(default_factory=time.monotonic)
    history: list[Message] = field(default_factory=list)
    queue: InputQueue = field(default_factory=InputQueue)
    # Set by `stop`: its own abort, not the tree's.
    stopped: bool = False
    done: bool = False
    # The loop's task, cancelled when the parent gives up on it.
    task: asyncio.Future[LoopResult] | None = None
    usage: Usage = field(default_factory=Usage)
    ended: asyncio.Future[SubagentEnd] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def emit(self, event: Event) -> None:
        if self.done:
            return  # a late event of one that was ended: nothing after its end
        event.agent_id = self.agent_id
        event.parent_call_id = self.parent_call_id
        self.emit_out(event)


class Subagents:
    """The running sub-agents of one controller, and the `task` tool's runner."""

    def __init__(self, controller: AgentSetup, emit: Callable[[Event], None]) -> None:
        self._controller = controller
        self._emit = emit
        self.running: dict[str, RunningAgent] = {}
        # Ended ones' descriptions, so input for one that just ended is refused by name.
        self._ended: dict[str, str] = {}
        self._ids = itertools.count(1)
        self.max_parallel = DEFAULT_MAX_PARALLEL
        self.max_depth = DEFAULT_MAX_DEPTH
        # Builds a sub-agent's system prompt from its tools (set by assemble_controller:
        # the main prompt lists the tools, a sub-agent's must list its own).
        self.system_prompt_for: Callable[[Sequence[Tool]], str] | None = None

    def bind(self, tools: Sequence[Tool]) -> None:
        """Make the `task` tools among `tools` run here."""
        for tool in tools:
            if isinstance(tool, TaskTool):
                tool.runner = self.run
                tool.max_parallel = self.max_parallel

    # -- run control --------------------------------------------------------------------

    def get(self, agent_id: str) -> RunningAgent:
        agent = self.running.get(agent_id)
        if agent is not None:
            return agent
        if agent_id in self._ended:
            raise AgentGone(f"sub-agent {agent_id} ({self._ended[agent_id]!r}) has already ended")
        running = ", ".join(self.running) or "none is running"
        raise AgentGone(f"no sub-agent has id {agent_id!r} (running: {running})")

    def stop(self, agent_id: str) -> RunningAgent:
        """Stop one sub-agent (and those under it); the parent goes on."""
        agent = self.get(agent_id)
        agent.stopped = True
        agent.abort.abort(STOPPED)
        return agent

    def deliver(self, agent_id: str, text: str, mode: QueueMode) -> QueueEntry:
        """Queue `text` for that sub-agent's loop; `AgentGone` (nothing queued) if it is
        not running."""
        if not text.strip():
            raise ValueError("the message is empty")
        if is_shell_line(text):
            raise ValueError("a `!` line runs in the shell; it cannot be sent to a sub-agent")
        agent = self.get(agent_id)
        if agent.abort.signal.aborted:
            raise AgentGone(f"sub-agent {agent_id} ({agent.description!r}) is stopping")
        return agent.queue.add(text, mode)

    # -- running one --------------------------------------------------------------------

    async def run(
        self, tool: TaskTool, description: str, prompt: str, ctx: ToolContext
    ) -> ToolResult:
        """The `task` call: run a sub-agent to its end; its final answer is the result."""
        controller = self._controller
        settings = controller.settings
        agent = RunningAgent(
            agent_id=f"agent-{next(self._ids)}",
            description=description,
            prompt=prompt,
            parent_call_id=ctx.call_id or "",
            parent_agent_id=tool.agent_id,
            depth=tool.depth + 1,
            abort=AbortController(),
            emit_out=self._emit,
        )
        agent.queue = InputQueue(partial(self._publish_queue, agent))
        # The tree: the caller's abort is this one's too (it may also stop on its own).
        unlink = ctx.signal.add_callback(agent.abort.abort)
        self.running[agent.agent_id] = agent
        agent.emit(
            SubagentStart(
                description=description,
                prompt=prompt,
                depth=agent.depth,
                parent_agent_id=agent.parent_agent_id,
            )
        )
        tools = self._tools_for(agent)
        tag = AgentTag(agent.agent_id, agent.parent_call_id, description)
        steering, follow_up = settings.steering_mode, settings.follow_up_mode

        def take(mode: QueueMode, how: TakeMode) -> list[UserMessage]:
            return [message_of(e) for e in agent.queue.take(mode, how)]

        loop = AgentLoop(
            provider=controller.provider,
            tools=tools,
            system_prompt=self._system_prompt(tools),
            history=agent.history,
            ctx=tool_context(controller, agent.abort.signal, agent=tag),
            emit=agent.emit,
            take_steering=lambda: take("steer", steering),
            take_follow_up=lambda: take("follow_up", follow_up),
            config=settings.loop,
            backoff=CompactionBackoff(),
        )
        running = agent.task = asyncio.ensure_future(loop.run(prompt))
        stop: SubagentStopReason
        error: str | None = None
        turns = 0
        try:
            result = await running
        except asyncio.CancelledError:
            if not agent.done:
                # The call itself was cancelled (the session is closing), not this one
                # ended by its parent: end it all the same, then let the cancel through.
                running.cancel()
                self._finish(agent, "aborted", None, 0)
                raise
            return _result(agent, "aborted", None, 0)
        except Exception as failure:
            log.debug("sub-agent failed", exc_info=True)
            stop, error = "failed", describe_error(failure)
        else:
            turns = result.turns
            agent.usage = result.usage
            stop = result.stop_reason
            if stop == "aborted" and agent.stopped and not ctx.signal.aborted:
                stop = "stopped"
        finally:
            unlink()
        return self._finish(agent, stop, error, turns)

    def close(self, parent_agent_id: str | None) -> None:
        """End every sub-agent the agent `parent_agent_id` started that is still running
        (its tool step gave up on them): before that agent ends or settles."""
        for agent in [a for a in self.running.values() if a.parent_agent_id == parent_agent_id]:
            agent.abort.abort("its parent stopped waiting for it")
            self._finish(agent, "stopped" if agent.stopped else "aborted", None, 0)
            if agent.task is not None and not agent.task.done():
                agent.task.cancel()

    def _finish(
        self, agent: RunningAgent, stop: SubagentStopReason, error: str | None, turns: int
    ) -> ToolResult:
        result = _result(agent, stop, error, turns)
        if agent.done:
            return result
        self.close(agent.agent_id)
        self._restore_queue(agent)
        end = SubagentEnd(
            stop_reason=stop,
            result=result.content,
            error=error,
            usage=agent.usage,
            turns=turns,
            duration_s=time.monotonic() - agent.started,
            description=agent.description,
            messages=list(agent.history),
        )
        agent.emit(end)
        agent.done = True
        self.running.pop(agent.agent_id, None)
        self._ended[agent.agent_id] = agent.description
        if not agent.ended.done():
            agent.ended.set_result(end)
        return result

    def _restore_queue(self, agent: RunningAgent) -> None:
        """Input its loop never took goes back to the editor, said as such."""
        entries = agent.queue.drain()
        if not entries:
            return
        count = len(entries)
        inputs = "input" if count == 1 else "inputs"
        agent.emit(InputRestored(text="\n\n".join(e.text for e in entries), count=count))
        agent.emit(
            Notice(
                text=(
                    f"Sub-agent {agent.agent_id} ({agent.description}) ended before it took "
                    f"{count} queued {inputs}; restored to the editor."
                ),
                kind="restored",
            )
        )

    def _tools_for(self, agent: RunningAgent) -> list[Tool]:
        tools: list[Tool] = [t for t in self._controller.tools if not isinstance(t, TaskTool)]
        if agent.depth < self.max_depth:
            tools.append(
                TaskTool(
                    self.run,
                    max_parallel=self.max_parallel,
                    depth=agent.depth,
                    agent_id=agent.agent_id,
                )
            )
        return tools

    def _system_prompt(self, tools: Sequence[Tool]) -> str:
        build = self.system_prompt_for
        base = build(tools) if build is not None else self._controller.system_prompt
        return base + SUBAGENT_NOTE

    def _publish_queue(self, agent: RunningAgent, entries: list[QueueEntry]) -> None:
        agent.emit(QueueUpdate(entries=queue_views(entries)))


def _answer(history: Sequence[Message]) -> str:
    """The last text the sub-agent wrote (its final answer when it completed)."""
    for message in reversed(history):
        if isinstance(message, AssistantMessage) and message.text.strip():
            return message.text.strip()
    return ""


def _result(
    agent: RunningAgent, stop: SubagentStopReason, error: str | None, turns: int
) -> ToolResult:
    answer = _answer(agent.history)
    so_far = f"\n\nWhat it had so far:\n{answer}" if answer else " It had written nothing yet."
    details = {
        "agent_id": agent.agent_id,
        "description": agent.description,
        "stop_reason": stop,
        "turns": turns,
    }
    if stop == "completed":
        text = answer or "The sub-agent finished without writing an answer."
        return ToolResult(text, details=details)
    if stop == "max_iterations":
        limit = "It stopped at its limit of rounds of tool calls (max_iterations)"
        return ToolResult(f"{answer}\n\n[{limit} before it finished.]".lstrip(), details=details)
    if stop == "stopped":
        return ToolResult.error(f"Stopped by the user before it finished.{so_far}", **details)
    if stop == "failed":
        return ToolResult.error(f"The sub-agent failed: {error}.{so_far}", **details)
    return ToolResult.error(f"Interrupted before it finished.{so_far}", **details)
