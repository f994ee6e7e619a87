"""The transcript's subscriber to the event bus.

The event mapping (`transcript_events`, and with it every event, message and tool type)
is imported at the first event, after the first frame: imported with the transcript, those
were some 40 dataclasses, 9 ms of a 230 ms start.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ink_tui.core.events import Event
    from ink_tui.ui.widgets.transcript_events import TranscriptView


class TranscriptSubscriber:
    """Shows each run event in `transcript` (`transcript_events.show_event`), and each
    sub-agent's with `subagent` (under its task row)."""

    __slots__ = ("_show", "_subagent", "_transcript")

    def __init__(
        self, transcript: TranscriptView, subagent: Callable[[Event], None] | None = None
    ) -> None:
        self._transcript = transcript
        self._subagent = subagent
        self._show: Callable[[Event], None] | None = None

    def __call__(self, event: Event) -> None:
        if event.agent_id is not None:
            # A sub-agent's events are not the conversation's: its task call's row and
            # result are (the seed's rule: no sub-agent deltas among the parent's).
            if self._subagent is not None:
                self._subagent(event)
            return
        show = self._show
        if show is None:
            from ink_tui.ui.widgets.transcript_events import show_event

            show = self._show = partial(show_event, self._transcript)
        show(event)
