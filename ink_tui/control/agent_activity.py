"""What each sub-agent is doing, folded from the bus: for a task row and an activity panel.

`AgentActivity` is a bus subscriber (`bus.subscribe(activity)`) that keeps, per
sub-agent, from its `SubagentStart` on: its description, what it does now ("thinking",
"writing", or the label of the tool it runs: `bash pytest -q`), its tokens so far (the
usage of its replies), when it started and ended, how it ended, and its own events in
order (its transcript, to draw like the main one). Nothing of it reaches the main
transcript: a front end shows the parent's events (`agent_id` None) there and a
sub-agent's under its task row (`by_call[parent_call_id]`).

`on_change(agent_id)` listeners are called after each change (a front end refreshes
that row). Ended agents are kept (folded rows still show their transcript) until
`forget(agent_id)`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ink_tui.core.events import (
    Event,
    MessageEnd,
    SubagentEnd,
    SubagentStart,
    SubagentStopReason,
    TextDelta,
    ThinkingDelta,
    ToolEnd,
    ToolRunning,
    ToolStart,
    TurnStart,
)
from ink_tui.core.messages import ToolCall
from ink_tui.core.tool_summary import call_label


@dataclass(slots=True)
class AgentState:
    agent_id: str
    description: str
    parent_call_id: str
    parent_agent_id: str | None
    depth: int
    started: float
    # "starting", "thinking", "writing", a tool's label, or "ended".
    doing: str = "starting"
    tokens: int = 0
    turns: int = 0
    ended: float | None = None
    stop_reason: SubagentStopReason | None = None
    result: str = ""
    events: list[Event] = field(default_factory=list)
    # The calls it has running now (a concurrent group may run several), by id.
    _running: dict[str, ToolCall] = field(default_factory=dict)

    @property
    def running(self) -> bool:
        return self.ended is None

    def elapsed_s(self, now: float | None = None) -> float:
        end = self.ended if self.ended is not None else (now or time.monotonic())
        return end - self.started


class AgentActivity:
    def __init__(self) -> None:
        self.agents: dict[str, AgentState] = {}
        # The `task` call each one answers: a task row finds its sub-agent by call id.
        self.by_call: dict[str, AgentState] = {}
        self._listeners: list[Callable[[str], None]] = []

    def on_change(self, listener: Callable[[str], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    @property
    def running(self) -> list[AgentState]:
        return [a for a in self.agents.values() if a.running]

    def forget(self, agent_id: str) -> None:
        agent = self.agents.pop(agent_id, None)
        if agent is not None:
            self.by_call.pop(agent.parent_call_id, None)

    def __call__(self, event: Event) -> None:
        agent_id = event.agent_id
        if agent_id is None:
            return
        if isinstance(event, SubagentStart):
            state = AgentState(
                agent_id=agent_id,
                description=event.description,
                parent_call_id=event.parent_call_id or "",
                parent_agent_id=event.parent_agent_id,
                depth=event.depth,
                started=time.monotonic(),
            )
            self.agents[agent_id] = state
            self.by_call[state.parent_call_id] = state
        state_or_none = self.agents.get(agent_id)
        if state_or_none is None:
            return  # started before this subscriber listened
        agent = state_or_none
        agent.events.append(event)
        match event:
            case TurnStart():
                agent.turns = event.turn
                agent.doing = "thinking"
            case ThinkingDelta():
                agent.doing = "thinking"
            case TextDelta():
                agent.doing = "writing"
            case MessageEnd():
                usage = event.message.usage
                agent.tokens += usage.input_tokens + usage.output_tokens
            case ToolStart():
                agent._running[event.call.id] = event.call
                agent.doing = call_label(event.call, 40)
            case ToolRunning():
                pass
            case ToolEnd():
                agent._running.pop(event.call.id, None)
                if agent._running:
                    agent.doing = call_label(next(iter(agent._running.values())), 40)
                else:
                    agent.doing = "thinking"
            case SubagentEnd():
                agent.ended = time.monotonic()
                agent.stop_reason = event.stop_reason
                agent.result = event.result
                agent.doing = "ended"
                agent._running.clear()
            case _:
                pass
        for listener in tuple(self._listeners):
            listener(agent_id)
