"""The event bus: the one way run events reach front ends.

Delivery is synchronous, in publish order, on the caller's event loop; a subscriber
that raises is logged and kept away from the run and from other subscribers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # The bus is made with the app, before the first frame; the events come later.
    from ink_tui.core.events import Event

log = logging.getLogger(__name__)

Subscriber = Callable[["Event"], None]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._seq = 0

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Deliver every later event to `subscriber`; returns an unsubscribe function."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def publish(self, event: Event) -> None:
        self._seq += 1
        event.seq = self._seq
        for subscriber in tuple(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                log.exception("event subscriber failed on %s", event.type)
