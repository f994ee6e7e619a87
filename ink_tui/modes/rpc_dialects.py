"""RPC dialects: what each chooses (its command table, how the one public event stream
is written, which commands answer beside the reader). `rpc_loop` runs whichever it is
given; ink's own is here, pi's in `rpc_pi_dialect`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ink_tui.modes.rpc_commands import SessionHost, dispatch

if TYPE_CHECKING:
    from ink_tui.api.session import AgentSession

Send = Callable[[Mapping[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Dialect:
    """What a protocol dialect chooses: its commands, and its events."""

    dispatch: Callable[[SessionHost, dict[str, Any]], Awaitable[Any]]
    # A subscriber for one session's public events that sends the dialect's lines.
    events: Callable[[AgentSession, Send], Callable[[Any], None]]
    # Commands answered beside the stdin reader (they wait for a run).
    beside: frozenset[str]


def _ink_events(session: AgentSession, send: Send) -> Callable[[Any], None]:
    return send


INK = Dialect(dispatch, _ink_events, frozenset({"abort", "bash"}))
