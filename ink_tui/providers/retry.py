"""When a failed model request is worth another go, and how long to wait first.

Transient trouble (a refused or dropped connection, a timeout, HTTP 429 or 5xx) is
retried with exponential backoff and full jitter, so many clients that failed together
do not come back together. A server's `Retry-After` wins over our own guess. Every wait
ends the moment the run is aborted.
"""

from __future__ import annotations

import asyncio
import math
import random
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from ink_tui.core.abort import AbortSignal


class TransientFailure(Exception):
    """One attempt failed in a way another attempt may fix.

    `reason` is short, for the retry notice ("HTTP 503: overloaded"); `detail` is the
    full sentence for the final error if every attempt fails.
    """

    def __init__(
        self,
        reason: str,
        detail: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    # A server may ask for a long pause (a daily quota); waiting longer than this in an
    # interactive tool is worse than failing and letting the user decide, so the provider
    # fails at once with the server's wait rather than retrying early (see `too_long`).
    max_retry_after: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("retry delays must not be negative")

    def too_long(self, retry_after: float | None) -> bool:
        """True when the server asked for a longer wait than this policy will sit through."""
        return retry_after is not None and retry_after > self.max_retry_after

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (counting from 1)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return self.rng.uniform(0.0, ceiling)


def is_retryable_status(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """`Retry-After` as seconds from now: either delta-seconds or an HTTP date."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # HTTP dates are always GMT
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def retry_after_from(headers: Mapping[str, str]) -> float | None:
    # OpenAI and Azure also send the finer-grained `retry-after-ms`; prefer it when valid.
    millis = parse_retry_after(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    return parse_retry_after(headers.get("retry-after"))


def transport_failure(exc: httpx.HTTPError, url: str) -> TransientFailure | None:
    """Classify an httpx error; None when retrying cannot help (a bad URL, say)."""
    reason = describe_transport_error(exc)
    if isinstance(exc, httpx.ConnectError):
        return TransientFailure(reason, f"could not connect to {url}: {reason}")
    if isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError):
        return TransientFailure(reason, f"request to {url} failed: {reason}")
    return None


def describe_transport_error(exc: httpx.HTTPError) -> str:
    """A few plain words for what went wrong on the wire."""
    causes = _causes(exc)
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return "connection refused"
    if any(isinstance(c, socket.gaierror) for c in causes):
        return "could not resolve the host name"
    text = str(exc).strip().rstrip(".")  # it goes mid-sentence in our messages
    if isinstance(exc, httpx.ConnectTimeout):
        return "timed out connecting"
    if isinstance(exc, httpx.ReadTimeout):
        return "timed out waiting for the server to send more"
    if isinstance(exc, httpx.WriteTimeout):
        return "timed out sending the request"
    if isinstance(exc, httpx.PoolTimeout):
        return "timed out waiting for a free connection"
    if isinstance(exc, httpx.ConnectError):
        # anyio reports a refused connection to every address of a name this way.
        if "all connection attempts failed" in text.lower():
            return "connection refused"
        return f"could not connect ({text or type(exc).__name__})"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return f"the connection was lost ({text or type(exc).__name__})"
    return text or type(exc).__name__


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


async def abortable_sleep(delay: float, signal: AbortSignal) -> None:
    """Sleep for `delay` seconds; raises `AbortError` the moment the signal fires."""
    async with signal.scope():
        await asyncio.sleep(delay)
