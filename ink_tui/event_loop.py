"""Which asyncio event loop ink runs on: uvloop's where it is installed, else asyncio's own.

A model streams an SSE event per network write, and every read costs a trip through the
event loop (the wake-up, the protocol callback, a future, a timer for the read timeout).
uvloop does those in C: about 10-15 % less CPU per streamed update in RPC mode, and the
same per frame in the TUI. It is a plain dependency, but ink stays correct without it
(a platform with no wheel, `INK_NO_UVLOOP=1` to compare or to rule it out): everything
ink does is asyncio's public interface, which both loops implement.

RPC mode, the ACP agent and `ink serve` run on it (`run()`): each takes its signals
through `loop.add_signal_handler` (serve's stop, `serve/stopping.py`, is tested through
the real process in tests/test_serve_signals.py). The TUI and print modes stay on
asyncio's loop for now: their SIGTERM/SIGHUP path is a `signal.signal` handler
(`tools/job_exit.py`) that has only been tested on asyncio's loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _uvloop_policy() -> asyncio.AbstractEventLoopPolicy | None:
    if os.environ.get("INK_NO_UVLOOP"):
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.EventLoopPolicy()


def install() -> bool:
    """Make uvloop the loop of every later `asyncio.run()`; whether it could be."""
    policy = _uvloop_policy()
    if policy is None:
        return False
    asyncio.set_event_loop_policy(policy)
    return True


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, on uvloop when it is there."""
    install()
    return asyncio.run(main)
