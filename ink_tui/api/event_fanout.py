"""Hands a session's public events to everyone who listens, in order.

- Subscribers (`subscribe`, `events()`) get every later event. While the session is
  opening, events wait for the first subscriber (RPC and `ink serve` subscribe once
  `open` has returned, and must still see an extension's load failure first).
- Taps (`tap`) are the session's own listeners (its extensions' handlers): they see every
  event as it is made, the same dicts with the same seqs, are never held for, and do not
  count as the first subscriber.
- A callback that raises, or a coroutine one returns that fails, is logged: a caller's
  bug must not break the run or the other subscribers. Coroutines are kept until done
  (the loop holds tasks weakly).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from ink_tui.control.public_event_types import PublicEvent

log = logging.getLogger(__name__)

Listener = Callable[[PublicEvent], object]


class EventFanout:
    def __init__(self) -> None:
        self._subscribers: list[Listener] = []
        self._taps: list[Listener] = []
        # Events of the opening, kept for the first subscriber while `holding`.
        self._held: list[PublicEvent] = []
        self.holding = True
        self._closers: list[Callable[[], object]] = []
        self._tasks: set[asyncio.Future[Any]] = set()

    def subscribe(self, callback: Listener) -> Callable[[], None]:
        """Call `callback` with every later public event; returns an unsubscribe. The
        first subscriber also gets the events of the opening first (`extension_error`)."""
        self._subscribers.append(callback)
        held, self._held = self._held, []
        for public in held:
            self._hand(callback, public)
        return _remover(self._subscribers, callback)

    def tap(self, callback: Listener) -> Callable[[], None]:
        """Call `callback` with every later event as it is made; returns an untap."""
        self._taps.append(callback)
        return _remover(self._taps, callback)

    async def events(self) -> AsyncIterator[PublicEvent]:
        """Every later public event, in order, until `close`."""
        queue: asyncio.Queue[PublicEvent | None] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        close = lambda: queue.put_nowait(None)  # noqa: E731
        self._closers.append(close)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            unsubscribe()
            with contextlib.suppress(ValueError):
                self._closers.remove(close)

    def publish(self, public: PublicEvent) -> None:
        for callback in tuple(self._taps):
            self._hand(callback, public)
        if self.holding and not self._subscribers:
            self._held.append(public)
        for callback in tuple(self._subscribers):
            self._hand(callback, public)

    def close(self) -> None:
        """End every `events()` iterator."""
        for close in self._closers:
            close()

    def _hand(self, callback: Listener, public: PublicEvent) -> None:
        kind = public["type"]
        try:
            result = callback(public)
            # Most subscribers return None: spared the coroutine test.
            if result is not None and asyncio.iscoroutine(result):
                self._track(asyncio.ensure_future(result), kind)
        except Exception:
            log.exception("event subscriber failed on %s", kind)

    def _track(self, task: asyncio.Future[Any], kind: str) -> None:
        self._tasks.add(task)

        def done(finished: asyncio.Future[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("event subscriber failed on %s", kind, exc_info=finished.exception())

        task.add_done_callback(done)


def _remover(listeners: list[Listener], callback: Listener) -> Callable[[], None]:
    def remove() -> None:
        with contextlib.suppress(ValueError):
            listeners.remove(callback)

    return remove
