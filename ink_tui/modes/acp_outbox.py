"""What `ink acp` sends to the client without being asked, in the order it happened.

Public events arrive on the session's loop synchronously; the SDK's sends are
coroutines. One worker per connection sends them in turn, so `session/update`s keep
the events' order, and `flush()` lets a request handler answer only once everything
before its answer is out (ACP: a prompt's updates come before its response; a
permission question after the tool call it is about).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from acp.interfaces import Client

from ink_tui.modes.acp_types import SessionUpdate

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Update:
    session_id: str
    update: SessionUpdate


@dataclass(frozen=True, slots=True)
class _Notice:
    method: str
    params: dict[str, Any]


_Item = _Update | _Notice | asyncio.Future[None]


class Outbox:
    def __init__(self, client: Client) -> None:
        self._client = client
        self._items: asyncio.Queue[_Item | None] = asyncio.Queue()
        self._worker = asyncio.ensure_future(self._work())

    def update(self, session_id: str, update: SessionUpdate) -> None:
        self._items.put_nowait(_Update(session_id, update))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """An extension notification; `method` without its leading underscore."""
        self._items.put_nowait(_Notice(method, params))

    async def flush(self) -> None:
        """Until everything put before this call has been sent (or failed to be)."""
        if self._worker.done():
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._items.put_nowait(done)
        await asyncio.shield(done)

    async def aclose(self) -> None:
        self._items.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._worker), 5.0)
        except (TimeoutError, asyncio.CancelledError):
            self._worker.cancel()

    async def _work(self) -> None:
        while (item := await self._items.get()) is not None:
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            try:
                if isinstance(item, _Update):
                    await self._client.session_update(
                        session_id=item.session_id, update=item.update
                    )
                else:
                    await self._client.ext_notification(item.method, item.params)
            except ConnectionError:
                # The client is gone: the rest is dropped as it comes (the loop goes on,
                # so that flushes still return).
                log.debug("acp: client gone, dropping %s", type(item).__name__)
            except Exception:
                log.exception("acp: could not send %s", type(item).__name__)
