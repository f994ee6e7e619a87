"""What a widget asks of one sub-agent: stop it, or steer it.

The task row in the transcript and the activity panel's sub-agent rows post these
(a key or a click on the row); the app turns them into controller calls, so the widgets
never hold the controller. They bubble to the app like any Textual message.
"""

from __future__ import annotations

from textual.message import Message


class StopAgentRequested(Message):
    """Stop sub-agent `agent_id` (and those under it); the parent goes on."""

    def __init__(self, agent_id: str, description: str) -> None:
        super().__init__()
        self.agent_id = agent_id
        self.description = description


class SteerAgentRequested(Message):
    """Point the input at sub-agent `agent_id`: the next line sent steers it."""

    def __init__(self, agent_id: str, description: str) -> None:
        super().__init__()
        self.agent_id = agent_id
        self.description = description
