"""What the Python API says about sub-agents: the running ones, how one stopped, and
the ones a resumed session recorded.

`AgentSession.agents` lists the running sub-agents; `steer` / `follow_up` take an
`agent_id`; `abort_agent(agent_id)` stops one and returns once it has ended. RPC
(`get_agents`, `abort_agent`, `steer`/`follow_up` with `agent_id`) hands on the same.
`AgentSession.recorded_subagents()` gives the conversations of the sub-agents the
session file held when it was opened (`RecordedAgent`), which the parent's history has
only as task calls and their results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from ink_tui.control.public_values import history_dict, usage_dict
from ink_tui.core.messages import AssistantMessage, Usage

if TYPE_CHECKING:
    from ink_tui.control.public_event_types import HistoryMessage, UsageInfo
    from ink_tui.control.subagents import RunningAgent
    from ink_tui.session.entries import SubagentEntry


class AgentInfo(TypedDict):
    """A running sub-agent, as `agents` and RPC `get_agents` list it."""

    agent_id: str
    description: str
    # The `task` call that started it, and the agent that made it (None: the main one).
    parent_call_id: str
    parent_agent_id: str | None
    depth: int
    # Seconds since it started.
    elapsed_s: float
    # Its own queue: input sent to it with `agent_id`, not yet taken by its loop.
    queue: list[str]


@dataclass(frozen=True, slots=True)
class AgentStopped:
    """How a sub-agent that `abort_agent` stopped ended."""

    agent_id: str
    # "stopped" (by this call), or how it ended had it ended first ("completed", ...).
    stop_reason: str
    # What its `task` call returned to the parent.
    result: str


def agent_info(agent: RunningAgent, now: float) -> AgentInfo:
    return {
        "agent_id": agent.agent_id,
        "description": agent.description,
        "parent_call_id": agent.parent_call_id,
        "parent_agent_id": agent.parent_agent_id,
        "depth": agent.depth,
        "elapsed_s": round(now - agent.started, 3),
        "queue": [e.text for e in agent.queue.entries],
    }


class RecordedAgent(TypedDict):
    """A sub-agent of an earlier run, as its session file recorded it when it ended."""

    # Counted from 1 in each process that opened the session: two recorded sub-agents
    # may share one (`parent_call_id`, a provider's call id, tells them apart).
    agent_id: str
    description: str
    # The `task` call that started it, and the recorded sub-agent whose conversation
    # holds that call (None: the main agent's).
    parent_call_id: str
    parent_agent_id: str | None
    # How it ended: "completed", "stopped", "aborted", "max_iterations", "failed".
    stop_reason: str
    # Its replies, and their usage added up.
    turns: int
    usage: UsageInfo
    # Its whole conversation (its prompt first), as `AgentSession.messages` gives one.
    messages: list[HistoryMessage]


def recorded_agents(entries: list[SubagentEntry]) -> list[RecordedAgent]:
    """The `subagent` entries of a session file, in the order they ended."""
    # Which recorded sub-agent made each task call (a sub-agent's own sub-agents).
    caller: dict[str, int] = {}
    for index, entry in enumerate(entries):
        for item in entry.entries:
            if isinstance(item.message, AssistantMessage):
                for call in item.message.tool_calls:
                    if call.name == "task":
                        caller.setdefault(call.id, index)
    recorded: list[RecordedAgent] = []
    for index, entry in enumerate(entries):
        made_by = caller.get(entry.parent_call_id)
        parent = entries[made_by].agent_id if made_by is not None and made_by != index else None
        usage = Usage()
        replies = [e.message for e in entry.entries if isinstance(e.message, AssistantMessage)]
        for reply in replies:
            usage.add(reply.usage)
        recorded.append(
            {
                "agent_id": entry.agent_id,
                "description": entry.description,
                "parent_call_id": entry.parent_call_id,
                "parent_agent_id": parent,
                "stop_reason": entry.stop_reason,
                "turns": len(replies),
                "usage": usage_dict(usage),
                "messages": [history_dict(e.message) for e in entry.entries],
            }
        )
    return recorded
