"""Time as the UI sees it: elapsed counters and spinner frames.

Everything on screen that moves with time reads this clock, so snapshot tests can freeze
it (`freeze(t)`) and get the same picture on every run.
"""

from __future__ import annotations

import time

_frozen: float | None = None
_zero_durations = False

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def now() -> float:
    return _frozen if _frozen is not None else time.monotonic()


def freeze(at: float | None, *, zero_durations: bool = False) -> None:
    """Freeze the clock at `at` seconds (None: run freely again).

    `zero_durations` also shows every measured duration as zero (see `shown_duration`).
    """
    global _frozen, _zero_durations
    _frozen = at
    _zero_durations = zero_durations and at is not None


def is_frozen() -> bool:
    return _frozen is not None


def spinner(started: float, fps: float = 10.0) -> str:
    index = int((now() - started) * fps) % len(SPINNER_FRAMES)
    return SPINNER_FRAMES[index]


def format_elapsed(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def shown_duration(measured: float) -> float:
    """A duration measured elsewhere (the core's clock), as the screen shows it.

    Pictures freeze the clock with `zero_durations`, so they do not depend on how fast
    the machine ran the tools.
    """
    return 0.0 if _zero_durations else measured
