"""`Opening`: something being opened that a caller may `await` or use in `async with`.

    session = await AgentSession.open(...)          # the caller closes it
    async with AgentSession.open(...) as session:   # closed on the way out

Shared by the public API's `AgentSession.open` and `RpcClient.spawn`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Opening(Generic[T]):
    def __init__(
        self, coro: Coroutine[Any, Any, T], close: Callable[[T], Awaitable[object]]
    ) -> None:
        self._coro = coro
        self._close = close
        self._opened: T | None = None

    def __await__(self) -> Generator[Any, None, T]:
        return self._coro.__await__()

    async def __aenter__(self) -> T:
        self._opened = await self._coro
        return self._opened

    async def __aexit__(self, *exc: object) -> None:
        if self._opened is not None:
            await self._close(self._opened)
