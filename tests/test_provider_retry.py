"""The retry policy on its own: backoff bounds, Retry-After parsing, abortable sleep."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.providers.retry import (
    RetryPolicy,
    abortable_sleep,
    is_retryable_status,
    parse_retry_after,
    retry_after_from,
)

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


class Highest(random.Random):
    """Always draws the top of the range, so the ceiling itself is observable."""

    def uniform(self, a: float, b: float) -> float:
        return b


def test_backoff_ceiling_doubles_and_is_capped() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, max_delay=30.0, rng=Highest())
    assert [policy.delay(attempt) for attempt in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_backoff_has_full_jitter() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=30.0, rng=random.Random(7))
    delays = [policy.delay(4) for _ in range(200)]
    assert all(0.0 <= delay <= 8.0 for delay in delays)
    # Full jitter spreads over the whole range, not just near the ceiling.
    assert min(delays) < 1.0 and max(delays) > 7.0


def test_retry_after_wins_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=2.0, rng=Highest())
    assert policy.delay(1, retry_after=0.0) == 0.0
    assert policy.delay(1, retry_after=12.5) == 12.5  # beyond max_delay: the server knows
    assert policy.delay(1, retry_after=3600.0) == 60.0


def test_a_retry_after_beyond_the_cap_is_too_long_to_wait_for() -> None:
    policy = RetryPolicy()
    assert not policy.too_long(None)
    assert not policy.too_long(60.0)
    assert policy.too_long(60.5)
    assert policy.too_long(3600.0)


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(base_delay=-1.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0.0),
        ("7", 7.0),
        (" 2.5 ", 2.5),
        ("-3", 0.0),
        (format_datetime(NOW + timedelta(seconds=90), usegmt=True), 90.0),
        (format_datetime(NOW - timedelta(seconds=90), usegmt=True), 0.0),
        ("Fri, 03 Jan 2025 03:04:05 GMT", 86400.0),
        ("soon", None),
        ("", None),
        (None, None),
        ("nan", None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


def test_retry_after_ms_header_is_preferred() -> None:
    headers = httpx.Headers({"Retry-After": "20", "retry-after-ms": "1500"})
    assert retry_after_from(headers) == 1.5
    assert retry_after_from(httpx.Headers({"Retry-After": "20"})) == 20.0
    assert retry_after_from(httpx.Headers({})) is None


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        *[(429, True), (500, True), (502, True), (503, True), (599, True)],
        *[(400, False), (401, False), (404, False), (408, False), (422, False), (200, False)],
    ],
)
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


async def test_abortable_sleep_ends_at_once_on_abort() -> None:
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.02, controller.abort, "stop waiting")
    started = time.monotonic()
    with pytest.raises(AbortError, match="stop waiting"):
        await abortable_sleep(30.0, controller.signal)
    assert time.monotonic() - started < 0.1


async def test_abortable_sleep_sleeps_when_not_aborted() -> None:
    started = time.monotonic()
    await abortable_sleep(0.02, AbortController().signal)
    assert time.monotonic() - started >= 0.015
