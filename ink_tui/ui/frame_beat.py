"""The transcript's frames, for the other widgets that move with time to draw on.

While an answer streams the transcript draws several frames a second, and the activity
panel's spinner and the status bar's clock moved on timers of their own: screen updates
(compositor, terminal write) of their own where one would do, a good part of what
streaming cost (figure 10, benchmarks/README.md). A widget that paints on a timer can
instead follow the beat: `FrameBeat.beat()` is called by the transcript as it draws,
synchronously, so whatever the followers paint is in the same screen update. A follower
(`BeatTicker`) keeps its own timer for when no frames come (a tool runs, the model
thinks) and puts it off at every beat, so it fires only once beats stop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ink_tui.ui.loop_timer import LoopTimer

if TYPE_CHECKING:
    from textual.widget import Widget

# Beats this recent mean the transcript is drawing: a follower's own tick stands aside.
# Longer than the transcript's slowest streaming frame, so ticks do not come in between.
# Real time, not `clock`'s: a frozen clock (snapshot tests) must not stop the ticks.
BEATING_S = 0.15


class FrameBeat:
    def __init__(self) -> None:
        self._followers: list[Callable[[], None]] = []
        self._last: float | None = None

    def follow(self, on_beat: Callable[[], None]) -> Callable[[], None]:
        """Call `on_beat` at every beat; returns what stops that."""
        self._followers.append(on_beat)
        return lambda: self._followers.remove(on_beat)

    def beat(self) -> None:
        self._last = time.monotonic()
        for on_beat in list(self._followers):
            on_beat()

    def beating(self) -> bool:
        return self._last is not None and time.monotonic() - self._last < BEATING_S


class BeatTicker:
    """`paint` every `every_s` while resumed: in the transcript's frames while they come
    (a beat a little early still paints, so at that frame rate each one does), on a
    timer of the widget's own when they do not. Paused at first, as Textual's are.

    The timer is a `LoopTimer` that each beat sets further off, so while frames come
    it never fires: a ticking interval timer cost a task's wake-up every period for a
    tick that found the beat had painted."""

    def __init__(self, beat: FrameBeat, every_s: float, paint: Callable[[], None]) -> None:
        self._beat = beat
        self._every_s = every_s
        self._paint = paint
        self._timer: LoopTimer | None = None
        self._running = False
        self._painted_at = 0.0
        self._unfollow: Callable[[], None] = lambda: None

    def start(self, widget: Widget) -> None:
        """On the widget's mount: its timer, and following the beat."""
        self._timer = LoopTimer(widget, self._tick)
        self._unfollow = self._beat.follow(self._on_beat)
        if self._running:
            self._timer.start(self._every_s)

    def stop(self) -> None:
        """On the widget's unmount."""
        self._unfollow()
        if self._timer is not None:
            self._timer.cancel()

    def resume(self) -> None:
        self._running = True
        if self._timer is not None and not self._timer.armed:
            self._timer.start(self._every_s)

    def pause(self) -> None:
        self._running = False
        if self._timer is not None:
            self._timer.cancel()

    def _tick(self) -> None:
        if not self._running:
            return
        if not self._beat.beating():
            self._run()
        self._rearm(self._every_s)

    def _on_beat(self) -> None:
        if not self._running:
            return
        if time.monotonic() - self._painted_at >= 0.9 * self._every_s:
            self._run()
        # Beats are coming: the own timer waits for them to stop.
        self._rearm(max(self._every_s, BEATING_S))

    def _rearm(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.start(delay)

    def _run(self) -> None:
        self._painted_at = time.monotonic()
        self._paint()
