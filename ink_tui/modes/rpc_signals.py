"""The signals that end RPC mode, and their exit codes: shared by the entry point
(rpc_mode.py, which takes them from its first line on) and the loop (rpc_loop.py, which
aborts, settles and exits with them). Standard library only: the entry point imports it
before anything slow."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable
from types import FrameType

# SIGHUP too (the driver's terminal closed): abort, settle and exit like the others.
EXIT_SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


class EarlySignals:
    """Exit signals that come while the loop cannot take them yet (ink still loading,
    the session opening) or no longer (closing): kept, never fatal."""

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self.on_receive: list[Callable[[], None]] = []

    def install(self) -> None:
        for signum in EXIT_SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, self._record)

    def take(self) -> signal.Signals | None:
        return self.received

    def _record(self, signum: int, frame: FrameType | None) -> None:
        self.received = signal.Signals(signum)
        for callback in self.on_receive:
            callback()
