"""What the Python API says about sub-agents: the running ones, and how one stopped.

`AgentSession.agents` lists the running sub-agents; `steer` / `follow_up` take an
`agent_id`; `abort_agent(agent_id)` stops one and returns once it has ended. RPC
(`get_agents`, `abort_agent`, `steer`/`follow_up` with `agent_id`) hands on the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from ink_tui.control.subagents import RunningAgent


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
