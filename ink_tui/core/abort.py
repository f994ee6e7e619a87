"""Abort signal shared by every layer of a run.

One `AbortController` exists per run; its `signal` is handed to the loop, the provider
and every tool. Firing it is idempotent: the first reason wins and callbacks run once.

Two ways to react to it:

- poll `signal.aborted` at safe points (the loop does this at the top of each iteration);
- wrap an await in `async with signal.scope():`, which cancels the awaiting task the
  moment the signal fires and turns that cancellation into `AbortError`. The provider
  uses this so an interrupt closes the HTTP stream at once instead of waiting for the
  next chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class AbortError(Exception):
    """Raised where an operation stopped because its run was aborted."""

    def __init__(self, reason: str = "aborted") -> None:
        super().__init__(reason)
        self.reason = reason


class AbortSignal:
    """Read side of an abort: observed by the loop, provider and tools."""

    def __init__(self) -> None:
        self._reason: str | None = None
        self._callbacks: list[Callable[[str], None]] = []
        self._waiters: list[asyncio.Future[str]] = []

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    def raise_if_aborted(self) -> None:
        if self._reason is not None:
            raise AbortError(self._reason)

    def add_callback(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(reason)` when the signal fires (at once if it has fired).

        Returns a function that removes the callback again.
        """
        if self._reason is not None:
            callback(self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> str:
        """Wait until the signal fires; returns the reason."""
        if self._reason is not None:
            return self._reason
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            return await future
        finally:
            if future in self._waiters:
                self._waiters.remove(future)

    @asynccontextmanager
    async def scope(self) -> AsyncIterator[None]:
        """Cancel the current task when the signal fires; raise `AbortError` instead.

        Cancellation that did not come from this signal propagates unchanged.
        """
        self.raise_if_aborted()
        task = asyncio.current_task()
        assert task is not None, "scope() needs a running task"
        fired = False

        def cancel(_reason: str) -> None:
            nonlocal fired
            fired = True
            # Fired from inside this very task: it is not suspended, so there is
            # nothing to interrupt; the exit check below raises instead.
            if asyncio.current_task() is not task:
                task.cancel()

        remove = self.add_callback(cancel)
        try:
            yield
        except asyncio.CancelledError:
            if fired and task.uncancel() == 0:
                raise AbortError(self._reason or "aborted") from None
            raise
        finally:
            remove()
        if fired:
            raise AbortError(self._reason or "aborted")

    def _fire(self, reason: str) -> None:
        if self._reason is not None:
            return
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(reason)
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(reason)


class AbortController:
    """Write side of an abort: owned by whoever may stop the run."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str = "interrupted by the user") -> None:
        self.signal._fire(reason)
