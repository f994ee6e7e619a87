"""Keeping what an extension raises inside the extension.

asyncio lets `SystemExit` and `KeyboardInterrupt` out of a task or a callback and out of
the event loop: an extension's `sys.exit()` (or an argparse error) would end ink. Every
place ink calls extension code catches BaseException; what runs as a task is awaited
through `contained`, which turns those two (and a CancelledError the extension raised
itself, not a real cancellation) into `HandlerEscaped`, an ordinary exception.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any


class HandlerEscaped(Exception):
    """An async handler's SystemExit / KeyboardInterrupt, carried as an ordinary
    exception: asyncio re-raises those two out of the event loop, ending the process."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(describe(error))
        self.error = error


def describe(error: BaseException) -> str:
    if isinstance(error, HandlerEscaped):
        error = error.error
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _really_cancelled() -> bool:
    """Whether this task is being cancelled (an abort, a close), as opposed to an
    extension raising CancelledError of its own."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def contained(awaitable: Awaitable[Any]) -> Any:
    """Await an extension's coroutine so that nothing it raises leaves the task but an
    ordinary exception (or a real cancellation, or the close of the coroutine)."""
    try:
        return await awaitable
    except asyncio.CancelledError as error:
        if _really_cancelled():
            raise
        raise HandlerEscaped(error) from None
    except GeneratorExit:
        raise  # the coroutine is being closed: it must not go on
    except Exception:
        raise
    except BaseException as error:
        raise HandlerEscaped(error) from None


async def checked(handler: Callable[[Any], Any], info: Any) -> Any:
    """A `tool_call` handler's verdict; raises what it raised, wrapped when asyncio would
    not let it through as it is."""
    try:
        verdict = handler(info)
    except BaseException as error:  # a sync handler: nothing of asyncio's is in flight
        raise HandlerEscaped(error) from None
    if inspect.isawaitable(verdict):
        return await contained(verdict)
    return verdict
