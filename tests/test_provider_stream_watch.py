"""StreamWatch's arithmetic on a clock the test moves: when to report a silence, when to quit."""

from __future__ import annotations

import pytest

from ink_tui.core.provider_api import ProviderError, StreamTimeouts, Waiting
from ink_tui.providers.stream_watch import StreamWatch, seconds


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


LIMITS = StreamTimeouts(
    first_byte_s=120, idle_s=60, attempt_s=600, notice_after_s=3, notice_every_s=1
)


def test_a_silence_is_reported_after_three_seconds_then_every_second() -> None:
    clock = Clock()
    watch = StreamWatch(LIMITS, "the server", clock)
    assert watch.patience() == 3
    clock.now = 3
    assert watch.quiet() == Waiting(3, 120)
    assert watch.patience() == 1
    clock.now = 4
    assert watch.quiet() == Waiting(4, 120)


def test_bytes_end_the_wait_and_the_idle_limit_takes_over() -> None:
    clock = Clock()
    watch = StreamWatch(LIMITS, "the server", clock)
    clock.now = 5
    watch.quiet()
    assert watch.arrived() == Waiting(0, 0, over=True)
    assert watch.arrived() is None  # nothing was on screen to end this time
    clock.now = 8
    assert watch.quiet() == Waiting(3, 60)
    clock.now = 65
    with pytest.raises(ProviderError, match=r"stalled: the server sent nothing for 60 s"):
        watch.quiet()


def test_the_first_byte_allowance_is_longer_than_the_idle_limit() -> None:
    clock = Clock()
    watch = StreamWatch(LIMITS, "the server", clock)
    clock.now = 100  # past the idle limit, within the first-byte allowance
    assert watch.quiet().limit == 120
    clock.now = 120
    with pytest.raises(ProviderError, match=r"first_token_timeout_s = 120; raise it"):
        watch.quiet()


def test_the_attempt_limit_bounds_every_silence() -> None:
    clock = Clock()
    watch = StreamWatch(LIMITS, "the server", clock)
    for now in [*range(1, 590, 30), 589]:  # bytes every 30 s or less: never idle long
        clock.now = now
        watch.arrived()
    clock.now = 593
    assert watch.quiet() == Waiting(4, 11)  # 600 s from the start, not 60 s of quiet
    assert watch.patience() == 1
    clock.now = 600
    with pytest.raises(ProviderError, match=r"took longer than 600 s \(request_timeout_s"):
        watch.quiet()


@pytest.mark.parametrize(
    ("value", "shown"), [(60.0, "60"), (0.5, "0.5"), (1.5, "1.5"), (3600.0, "3600"), (12.4, "12")]
)
def test_seconds_read_well(value: float, shown: str) -> None:
    assert seconds(value) == shown
