"""Run control of one sub-agent from the TUI: stop it, or point the input at it.

The activity panel's rows and the transcript's task rows post `StopAgentRequested` and
`SteerAgentRequested` (ui/agent_requests.py); the app hands them here, and the lines the
input sends while pointed at a sub-agent (`PromptInput.Submitted.agent_id`).

- Stop: `abort_agent`; the hint row says "Stopping …", then "Stopped …" once it has
  ended. Its `task` call returns "stopped by the user" with what it had, and the parent
  goes on (the controller's part). One that has ended already: a message, nothing else.
- Steer: the input is pointed at it (border, placeholder, hint row); the text already in
  the box stays. Enter steers it (Alt+Enter queues it a follow-up), then the input
  points at the main agent again; Esc only points it back. If it has ended meanwhile the
  text comes back into the box, nothing is sent anywhere, and the hint says Enter now
  sends to the main agent: a line meant for a sub-agent never reaches another agent
  without a second Enter.
"""

from __future__ import annotations

import contextlib
from functools import partial
from typing import TYPE_CHECKING

from textual.css.query import NoMatches

from ink_tui.ui.widgets.hint_row import HintRow

if TYPE_CHECKING:
    from asyncio import Future

    from ink_tui.core.events import SubagentEnd
    from ink_tui.core.messages import QueueMode
    from ink_tui.ui.app_host import AppHost

# How long the hint row shows what happened to a sub-agent.
SAY_S = 3.0
# Longer for the text given back: it says where the next Enter goes.
GONE_SAY_S = 6.0


class AgentControl:
    def __init__(self, app: AppHost) -> None:
        self.app = app
        # Descriptions of the sub-agents asked about, by id, for what the hints say
        # about a line sent to one (the request that pointed the input carries it).
        self._descriptions: dict[str, str] = {}

    # -- stop ---------------------------------------------------------------------------

    def stop(self, agent_id: str, description: str) -> None:
        from ink_tui.control.subagents import AgentGone

        controller = self.app.controller
        if controller is None:
            return
        try:
            agent = controller.abort_agent(agent_id)
        except AgentGone:
            self._say(f"{description} has already ended")
            return
        self._say(f"Stopping {description}…")
        agent.ended.add_done_callback(partial(self._stopped, description))

    def _stopped(self, description: str, ended: Future[SubagentEnd]) -> None:
        # Otherwise it finished, or the whole tree was interrupted, before the stop
        # took: its task row says how it ended.
        if not ended.cancelled() and ended.result().stop_reason == "stopped":
            self._say(f"Stopped {description}")

    # -- steer --------------------------------------------------------------------------

    @property
    def target(self) -> str | None:
        """The sub-agent the input's next line goes to (None: the main agent)."""
        return self.app.prompt.target

    def point(self, agent_id: str, description: str) -> None:
        """Point the input at sub-agent `agent_id`; its text stays as it is."""
        from ink_tui.control.subagents import AgentGone

        controller = self.app.controller
        if controller is None:
            return
        try:
            controller.subagents.get(agent_id)
        except AgentGone:
            self._say(f"{description} has already ended")
            return
        self._descriptions[agent_id] = description
        prompt = self.app.prompt
        prompt.point_at(agent_id, description)
        self._hint_row().set_steering(description)
        prompt.focus()

    def back_to_main(self) -> bool:
        """Point the input at the main agent again (Esc), with the focus; False if it
        already was."""
        prompt = self.app.prompt
        if prompt.target is None:
            return False
        prompt.point_at(None)
        prompt.focus()
        self._hint_row().set_steering(None)
        return True

    def ended(self, agent_id: str) -> None:
        """A sub-agent ended: if the input points at it, its title says so. The target
        stays: the next Enter gives the text back rather than send it elsewhere."""
        description = self._descriptions.get(agent_id)
        if description is not None and self.target == agent_id:
            self.app.prompt.mark_target_ended(description)

    def send(self, text: str, mode: QueueMode, agent_id: str) -> None:
        """A line the input sent to sub-agent `agent_id` (Enter: steer, Alt+Enter:
        follow-up). Whatever happens, the text is never lost."""
        from ink_tui.control.subagents import AgentGone

        controller = self.app.controller
        description = self._descriptions.get(agent_id, agent_id)
        if controller is None:
            self.app.prompt.restore(text)
            return
        deliver = controller.steer if mode == "steer" else controller.follow_up
        try:
            deliver(text, agent_id=agent_id)
        except AgentGone:
            self.app.prompt.restore(text)
            self._back_from(agent_id)
            self._say(
                f"{description} has already ended: your text is back in the input, "
                "and Enter now sends it to the main agent",
                GONE_SAY_S,
            )
            return
        except ValueError as refused:
            # A `!` line (the shell's, not a sub-agent's): the text back, still aimed.
            self.app.prompt.restore(text)
            message = str(refused)
            self._say(message[:1].upper() + message[1:])
            return
        self._back_from(agent_id)
        what = "a steer" if mode == "steer" else "a follow-up"
        self._say(f"Sent {what} to {description}")

    def _back_from(self, agent_id: str) -> None:
        # Only if the input still points there: a line sent just before the user pointed
        # it elsewhere must not undo that.
        if self.target == agent_id:
            self.back_to_main()
        self._descriptions.pop(agent_id, None)

    # -- the hint row -------------------------------------------------------------------

    def _hint_row(self) -> HintRow:
        return self.app.query_one(HintRow)

    def _say(self, message: str, seconds: float = SAY_S) -> None:
        # The app may be closing: a stop's end can come after the widgets went.
        with contextlib.suppress(NoMatches):
            self._hint_row().flash(message, seconds)
