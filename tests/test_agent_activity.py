"""`AgentActivity` folds a sub-agent's events into what a task row shows: what it does
now, its tokens, its transcript, how it ended; the parent's events are not its."""

from __future__ import annotations

from ink_tui.control.agent_activity import AgentActivity
from ink_tui.core.events import (
    Event,
    MessageEnd,
    SubagentEnd,
    SubagentStart,
    TextDelta,
    ToolEnd,
    ToolStart,
    TurnStart,
)
from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage
from ink_tui.core.tool_api import ToolResult


def mark(event: Event, agent_id: str = "agent-1", call: str = "call_t") -> Event:
    event.agent_id, event.parent_call_id = agent_id, call
    return event


def test_a_subagents_state_follows_its_events_and_not_the_parents() -> None:
    activity = AgentActivity()
    changed: list[str] = []
    activity.on_change(changed.append)
    bash = ToolCall("c1", "bash", {"command": "pytest -q"})
    activity(mark(SubagentStart(description="run tests", prompt="run them")))
    activity(mark(TurnStart(turn=1)))
    assert activity.by_call["call_t"].doing == "thinking"
    activity(mark(ToolStart(call=bash)))
    assert activity.agents["agent-1"].doing == "bash pytest -q"
    activity(TextDelta(text="the parent's words"))  # no agent_id: not the sub-agent's
    result = ToolResult("ok")
    message = ToolResultMessage(call_id="c1", tool_name="bash", content="ok")
    activity(mark(ToolEnd(call=bash, result=result, duration_s=0.1, message=message)))
    activity(mark(TextDelta(text="all pass")))
    assert activity.agents["agent-1"].doing == "writing"
    usage = Usage(input_tokens=100, output_tokens=20)
    activity(mark(MessageEnd(message=AssistantMessage(text="all pass", usage=usage))))
    assert [a.agent_id for a in activity.running] == ["agent-1"]
    activity(mark(SubagentEnd(stop_reason="completed", result="all pass")))
    agent = activity.agents["agent-1"]
    assert agent.tokens == 120 and agent.turns == 1 and agent.stop_reason == "completed"
    assert agent.result == "all pass" and not agent.running and activity.running == []
    assert all(e.agent_id == "agent-1" for e in agent.events) and len(agent.events) == 7
    assert changed == ["agent-1"] * 7
    activity.forget("agent-1")
    assert activity.agents == {} and activity.by_call == {}
