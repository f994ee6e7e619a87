"""pi's RPC dialect as `rpc_loop` takes it: pi's commands, and pi's events.

The two directions live apart: `rpc_pi_commands` (stdin) and `rpc_pi_events`
(stdout, projected from the one public event stream). This joins them into the
`Dialect` the loop runs with; docs/rpc.md ("pi's dialect") is the protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ink_tui.modes.rpc_dialects import Dialect, Send
from ink_tui.modes.rpc_pi_commands import BESIDE, dispatch
from ink_tui.modes.rpc_pi_events import PiEventProjection
from ink_tui.modes.rpc_pi_messages import provider_api

if TYPE_CHECKING:
    from ink_tui.api.session import AgentSession


def _pi_events(session: AgentSession, send: Send) -> Callable[[Any], None]:
    """A projection of its own for each session (new_session starts afresh)."""
    projection = PiEventProjection(lambda: provider_api(session.controller.provider))

    def on_event(event: Any) -> None:
        for pi_event in projection.project(event):
            send(pi_event)

    return on_event


PI = Dialect(dispatch, _pi_events, BESIDE)
