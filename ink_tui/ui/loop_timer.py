"""A one-shot timer on the event loop itself, for what runs every frame.

Textual's `set_timer` makes a `Timer` and starts a task for it each time, and the task
wakes twice, then hands the callback to the widget's message queue wrapped in a new
`partial`, whose parameters Textual counts by `inspect.signature` every time (it caches
the count on functions, not on partials). For a frame drawn ten times a second while an
answer streams, that was a visible share of what streaming costs (figure 10,
benchmarks/README.md). Here a timer is one `loop.call_later` handle, rearmed or
cancelled for a few microseconds, whose callback runs straight from the loop.

An error in the callback is raised again in the widget's message queue, so Textual
handles it as it would an error in any of the widget's handlers. The callback runs
only while the widget is attached to a running app; `cancel` it on unmount all the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.widget import Widget


class LoopTimer:
    def __init__(self, widget: Widget, callback: Callable[[], object]) -> None:
        self._widget = widget
        self._callback = callback
        self._handle: asyncio.TimerHandle | None = None

    @property
    def armed(self) -> bool:
        return self._handle is not None

    def start(self, delay: float) -> None:
        """Run the callback `delay` seconds from now (instead of when it was to run)."""
        if self._handle is not None:
            self._handle.cancel()
        self._handle = asyncio.get_running_loop().call_later(delay, self._fire)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        if not self._widget.is_attached:
            return
        try:
            self._callback()
        except Exception as error:
            self._widget.call_next(_raise, error)


def _raise(error: Exception) -> None:
    raise error
