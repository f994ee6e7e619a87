"""The clock of one model request: how long the server has been quiet, and when to give up.

Without it a server that sends its headers and then nothing held the reply for as long
as the HTTP read timeout allowed, retries included, with nothing on screen. The watch
gives each silence a limit (a long one until the first byte of the body arrives, since a
local model may load and read the prompt first; a shorter one between bytes after that),
bounds the attempt as a whole, and says `Waiting` a few seconds into any silence, so the
user sees that the server, not ink, is what is slow.

It holds no I/O: the provider asks `patience()` how long to wait for bytes, calls
`arrived()` when some came and `quiet()` when none did in time.

The silence limits measure the server only: ink's own time between two waits, and a
wait that ended far past its time (ink's loop held up by a handler, a starved machine:
the bytes may have sat in the socket meanwhile), are not counted. The attempt's limit
counts every second, so a loop that is always late still ends a dead request.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ink_tui.core.provider_api import ProviderError, StreamTimeouts, Waiting

# Timers may fire a hair before their deadline; a silence this close to a limit has reached it.
_SLACK = 1e-3
# Ink's own time between two waits, or past the end of one, beyond this was its loop held
# up (a handler that blocked it, a starved machine), not the server: bytes may have
# waited in the socket all along. It is not counted as the server's silence.
_LATE_S = 0.5


class StreamWatch:
    def __init__(
        self,
        limits: StreamTimeouts,
        source: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = limits
        self._source = source
        self._clock = clock
        self._started = self._last = clock()
        self._streaming = False  # a byte of the body has arrived
        self._waiting_shown = False  # a `Waiting` is out; the next bytes end it
        self._next_notice = limits.notice_after_s
        # The wait `patience()` gave: when it began and when it was to end.
        self._wait: tuple[float, float] | None = None
        self._ours_from: float | None = self._started  # not waiting since (ink's time)

    @property
    def streaming(self) -> bool:
        return self._streaming

    def patience(self) -> float:
        """Seconds to wait for bytes before calling `quiet()`."""
        # `_quiet_limit(now) - quiet` written out: asked once per network read.
        now = self._clock()
        ours, self._ours_from = self._ours_from, None
        if ours is not None and now - ours > _LATE_S:
            self._last += now - ours
        quiet = now - self._last
        limits = self._limits
        phase = limits.idle_s if self._streaming else limits.first_byte_s
        left = limits.attempt_s - (now - self._started)
        wait = max(0.0, min(phase - quiet, left, self._next_notice - quiet))
        self._wait = (now, now + wait)
        return wait

    def arrived(self) -> Waiting | None:
        """Bytes of the body arrived; returns the event that ends a wait on screen, if any."""
        self._last = self._ours_from = self._clock()
        self._wait = None
        self._streaming = True
        self._next_notice = self._limits.notice_after_s
        if self._waiting_shown:
            self._waiting_shown = False
            return Waiting(0.0, 0.0, over=True)
        return None

    def quiet(self) -> Waiting:
        """`patience()` ran out: the next `Waiting`, or `ProviderError` once a limit is hit."""
        now = self._clock()
        forgiven = self._forgive_lateness(now)
        self._ours_from = now
        quiet = self._quiet(now)
        limits = self._limits
        if now - self._started >= limits.attempt_s - _SLACK:
            raise ProviderError(
                f"the reply from {self._source} took longer than {seconds(limits.attempt_s)} s "
                f"(request_timeout_s = {seconds(limits.attempt_s)}); stopped waiting for it"
            )
        if quiet >= self._phase_limit() - _SLACK:
            raise ProviderError(self._silence_message())
        if forgiven and not self._waiting_shown and quiet < self._next_notice:
            # Nothing to report of the server: a wait on screen only ends (none is out).
            return Waiting(0.0, 0.0, over=True)
        self._waiting_shown = True
        self._next_notice = quiet + limits.notice_every_s
        return Waiting(quiet, self._quiet_limit(now))

    def _forgive_lateness(self, now: float) -> bool:
        """The silence limits measure the server only (the attempt's own limit counts
        every second). A wait that ended far past its time saw nothing of the server:
        ink's loop was held up somewhere in it, and the bytes may have been in the
        socket since. None of it is counted; the next wait looks again. Time between
        waits is ink's too (`patience()` leaves it out)."""
        wait, self._wait = self._wait, None
        if wait is None or now - wait[1] <= _LATE_S:
            return False
        self._last += now - wait[0]
        return True

    def _quiet(self, now: float) -> float:
        return now - self._last

    def _phase_limit(self) -> float:
        return self._limits.idle_s if self._streaming else self._limits.first_byte_s

    def _quiet_limit(self, now: float) -> float:
        """The silence at which this attempt ends: its phase's limit or the attempt's end."""
        left = self._limits.attempt_s - (now - self._started)
        return min(self._phase_limit(), self._quiet(now) + left)

    def _silence_message(self) -> str:
        limits = self._limits
        if self._streaming:
            return (
                f"the stream stalled: {self._source} sent nothing for "
                f"{seconds(limits.idle_s)} s in the middle of the reply "
                f"(stream_idle_timeout_s = {seconds(limits.idle_s)})"
            )
        return (
            f"{self._source} sent nothing for {seconds(limits.first_byte_s)} s after the "
            f"request (first_token_timeout_s = {seconds(limits.first_byte_s)}; raise it for "
            "a model that is slow to start)"
        )


def seconds(value: float) -> str:
    """A number of seconds for a message: "60", "0.5", "3600"."""
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:g}"
