"""A session's sub-agents as a page that loads (or reloads) later must draw them.

The event stream resumes after the session's `last_seq`, so a page loaded mid-run would
never see the events of a sub-agent that came before; the parent's history holds the
`task` call and its result, not the sub-agent's own conversation. This log keeps, for
each sub-agent seen, its public events (already redacted: they are the ones the stream
sends) in a compact form, and `GET /api/sessions/{id}` hands them on as `subagents`:

- A run of `message_update` deltas of one kind is kept as one event holding their text;
  the `message_end` that closes the message replaces them (it holds the whole message).
- At most `MAX_EVENTS` events per sub-agent (the oldest after its `subagent_start` go,
  counted in `dropped`) and `MAX_AGENTS` sub-agents per session (the oldest ended go).
- `elapsed_s` of a running one is measured here, so a reloaded page ticks on from it.

A resumed session's earlier sub-agents are not here (no events of theirs were seen):
`recorded_shown` gives them from the session file's record, `recorded: true`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ink_tui.api.subagents import RecordedAgent
    from ink_tui.serve.redact import Redactor

MAX_EVENTS = 1000
MAX_AGENTS = 100


@dataclass
class _Agent:
    start: dict[str, Any]
    started: float
    events: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    dropped: int = 0


class AgentLog:
    def __init__(self) -> None:
        self._agents: dict[str, _Agent] = {}

    def take(self, event: dict[str, Any]) -> None:
        """A session's public event (redacted); those without an `agent_id` are not kept."""
        agent_id = event.get("agent_id")
        if not isinstance(agent_id, str):
            return
        kind = event.get("type")
        if kind in ("approval_request", "approval_resolved"):
            return  # the session's state holds the open questions
        if kind == "subagent_start":
            self._agents[agent_id] = _Agent(start=event, started=time.monotonic())
            self._forget_old()
            return
        agent = self._agents.get(agent_id)
        if agent is None:
            return  # its start was before this server held the session
        if kind == "subagent_end":
            agent.end = event
            return
        events = agent.events
        if kind == "message_update":
            delta = event.get("delta") or {}
            last = events[-1] if events else None
            if last is not None and last.get("type") == "message_update":
                kept = last["delta"]
                if kept.get("type") == delta.get("type"):
                    kept["text"] = str(kept.get("text", "")) + str(delta.get("text", ""))
                    return
            event = {**event, "delta": dict(delta)}
        elif kind == "message_end":
            while events and events[-1].get("type") == "message_update":
                events.pop()
        events.append(event)
        if len(events) > MAX_EVENTS:
            del events[0]
            agent.dropped += 1

    def _forget_old(self) -> None:
        ended = [key for key, agent in self._agents.items() if agent.end is not None]
        for key in ended[: max(0, len(self._agents) - MAX_AGENTS)]:
            del self._agents[key]

    def shown(self) -> list[dict[str, Any]]:
        """Every sub-agent kept, in the order they started."""
        now = time.monotonic()
        return [
            {
                "agent_id": agent_id,
                "parent_call_id": agent.start.get("parent_call_id", ""),
                "parent_agent_id": agent.start.get("parent_agent_id"),
                "description": agent.start.get("description", ""),
                "running": agent.end is None,
                "recorded": False,
                "elapsed_s": round(now - agent.started, 3),
                "start": agent.start,
                "events": list(agent.events),
                "end": agent.end,
                "dropped": agent.dropped,
            }
            for agent_id, agent in self._agents.items()
        ]


def recorded_shown(recorded: list[RecordedAgent], redactor: Redactor) -> list[dict[str, Any]]:
    """`AgentSession.recorded_subagents()` in the shape of `AgentLog.shown`'s items, as
    they may leave: no events (`start` and `end` null), their conversation as
    `messages` (reduced and masked like the session's own), and how each ended."""
    shown = []
    for agent in recorded:
        item: dict[str, Any] = redactor.deep(
            {
                "agent_id": agent["agent_id"],
                "parent_call_id": agent["parent_call_id"],
                "parent_agent_id": agent["parent_agent_id"],
                "description": agent["description"],
                "running": False,
                "recorded": True,
                "elapsed_s": None,
                "start": None,
                "events": [],
                "end": None,
                "dropped": 0,
                "stop_reason": agent["stop_reason"],
                "turns": agent["turns"],
                "usage": dict(agent["usage"]),
            }
        )
        item["messages"] = redactor.messages(agent["messages"])
        shown.append(item)
    return shown
