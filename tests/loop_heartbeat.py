"""How long the event loop was held, told apart from the machine being busy.

A heartbeat task sleeps 10 ms at a time on the loop; each wake-up later than that is
lateness. On a shared machine the whole process can also be kept off the CPU for a
while, which is not the loop's fault: a reference thread ticks beside it, outside the
loop (it still gets the GIL every few ms while the loop computes, since Python switches
threads, and runs freely while the loop sits in a blocking call). For each late beat,
what counts is the lateness minus the reference thread's longest gap in the same
window: a loop held by our code shows up in full; a process descheduled by the OS shows
up in both and cancels out.

A busy machine can also give the process part of a CPU only: the loop's work then takes
longer than it costs while the reference thread still ticks. So the time the loop's
thread waited for a CPU (runnable, not running: the second field of Linux's schedstat)
is not counted either; what is left is time the loop ran our code or sat in a blocking
call.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import threading
import time

TICK_S = 0.01


class CpuWait:
    """How long the thread that made it has waited for a CPU so far (runnable, not
    running), in seconds; always 0 where Linux does not say (no schedstat)."""

    def __init__(self) -> None:
        self._path: str | None = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        try:
            self.total()
        except (OSError, ValueError, IndexError):
            self._path = None

    def total(self) -> float:
        if self._path is None:
            return 0.0
        with open(self._path, "rb") as file:
            return int(file.read().split()[1]) / 1e9


class ReferenceClock:
    """A thread ticking every 5 ms outside the event loop: how long the whole process was
    kept off the CPU in a window of time (`stall`)."""

    def __init__(self) -> None:
        self._ticks: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1)

    def _tick(self) -> None:
        while not self._stop.is_set():
            self._ticks.append(time.monotonic())
            time.sleep(TICK_S / 2)

    def stall(self, start: float, end: float) -> float:
        """How much longer than one tick the reference went silent within [start, end]
        (0 when it kept ticking): time nobody in this process could run."""
        ticks = self._ticks
        first = max(bisect.bisect_left(ticks, start) - 1, 0)
        last = min(bisect.bisect_right(ticks, end) + 1, len(ticks))
        window = ticks[first:last]
        gaps = [b - a for a, b in itertools.pairwise(window)]
        if window and window[-1] < end:
            gaps.append(end - window[-1])  # still silent at the end of the window
        return max(max(gaps, default=0.0) - TICK_S, 0.0)


class Heartbeat:
    """Ticks every 10 ms on the event loop; `worst` is the worst lateness that was the
    loop's own (see the module's docstring), `worst_raw` the plain worst."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.worst_raw = 0.0
        self.ticks = 0
        self.label = ""
        self.worst_at = ""
        self._task: asyncio.Task[None] | None = None
        self._beaten = asyncio.Condition()
        self.reference = ReferenceClock()

    async def beats(self, count: int) -> None:
        """Return once `count` beats have come (however long a busy machine takes)."""
        async with self._beaten:
            await self._beaten.wait_for(lambda: self.ticks >= count)

    def start(self) -> None:
        """Call on the loop's thread."""
        self.reference.start()
        self._cpu_wait = CpuWait()
        self._task = asyncio.ensure_future(self._beat())

    async def _beat(self) -> None:
        while True:
            before = time.monotonic()
            waited_before = self._cpu_wait.total()
            await asyncio.sleep(TICK_S)
            after = time.monotonic()
            waited = self._cpu_wait.total() - waited_before
            late = after - before - TICK_S
            self.worst_raw = max(self.worst_raw, late)
            if late > TICK_S:
                # Kept off the CPU, all of the process or the loop's thread: not its own.
                own = late - max(self.reference.stall(before, after), waited)
                if own > self.worst:
                    self.worst, self.worst_at = own, self.label
            self.ticks += 1
            async with self._beaten:
                self._beaten.notify_all()

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self.reference.stop()
