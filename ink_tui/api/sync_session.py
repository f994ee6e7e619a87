"""`SyncAgentSession`: the same session for code that has no event loop of its own.

It runs an `AgentSession` on an event loop in a thread of its own and waits for each
call there, so a plain script can write:

    with SyncAgentSession.open("path/to/project") as session:
        result = session.prompt("add a test for total()")

Every rule is the `AgentSession`'s (see session.py): `prompt` returns once settled,
refuses while busy unless `deliver_as` says how to queue it, `abort` returns once
settled. Callbacks given to `subscribe` run on the session's thread; `events()` hands
events over to the caller's thread.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from ink_tui.api.session import AgentSession, PromptResult, QueuedInput
from ink_tui.api.subagents import AgentInfo, AgentStopped, RecordedAgent
from ink_tui.control.input_queue import TakeMode
from ink_tui.control.public_event_types import HistoryMessage, PublicEvent
from ink_tui.core.messages import QueueMode

T = TypeVar("T")

# What every call on a closed session raises (`AgentSession` says the same).
CLOSED = "this session is closed"


class SyncAgentSession:
    def __init__(self, session: AgentSession, loop: asyncio.AbstractEventLoop,
                 thread: threading.Thread) -> None:  # fmt: skip
        self._session = session
        self._loop = loop
        self._thread = thread
        self._closed = False
        # Tasks copying events to `events()` readers; the loop holds tasks only weakly.
        self._pumps: set[asyncio.Future[None]] = set()

    @classmethod
    def open(cls, workspace: str | Path | None = None, **options: Any) -> SyncAgentSession:
        """Takes `AgentSession.open`'s arguments."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="ink-session", daemon=True)
        thread.start()

        async def opening() -> AgentSession:
            return await AgentSession.open(workspace, **options)

        try:
            session = asyncio.run_coroutine_threadsafe(opening(), loop).result()
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            raise
        return cls(session, loop, thread)

    # -- waiting on the session's loop ---------------------------------------------------

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._submit(coro).result()

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        # Refused here, not by the loop: a closed loop would say "Event loop is closed"
        # and leave `coro` never awaited (a warning on top). Closed, it is never run.
        if self._closed:
            coro.close()
            raise RuntimeError(CLOSED)
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a blocking call from the session's own thread would hang")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _call(self, function: Callable[..., T], *args: Any) -> T:
        async def call() -> T:
            return function(*args)

        return self._run(call())

    # -- the AgentSession's surface ------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self._session.session_id

    @property
    def session_file(self) -> Path | None:
        return self._session.session_file

    @property
    def is_busy(self) -> bool:
        return self._session.is_busy

    @property
    def queue(self) -> list[QueuedInput]:
        return self._call(lambda: self._session.queue)

    @property
    def messages(self) -> list[HistoryMessage]:
        return self._call(lambda: self._session.messages)

    def snapshot(self) -> dict[str, Any]:
        return self._call(self._session.snapshot)

    def prompt(self, text: str, deliver_as: QueueMode | None = None) -> PromptResult | QueuedInput:
        return self._run(self._session.prompt(text, deliver_as))

    def start(self, text: str) -> Future[PromptResult]:
        """Start a run; the returned future resolves when it settles."""

        async def start() -> PromptResult:
            return await self._session.start(text)

        return self._submit(start())

    def steer(self, text: str, agent_id: str | None = None) -> QueuedInput | None:
        return self._call(self._session.steer, text, agent_id)

    def follow_up(self, text: str, agent_id: str | None = None) -> QueuedInput | None:
        return self._call(self._session.follow_up, text, agent_id)

    def abort(self) -> PromptResult | None:
        return self._run(self._session.abort())

    def abort_agent(self, agent_id: str) -> AgentStopped:
        """Stop one sub-agent; returns once it has ended (see `AgentSession.abort_agent`)."""
        return self._run(self._session.abort_agent(agent_id))

    @property
    def agents(self) -> list[AgentInfo]:
        return self._call(lambda: self._session.agents)

    def recorded_subagents(self) -> list[RecordedAgent]:
        return self._session.recorded_subagents()

    # Going back (api/session_rewind.py).
    def tree(self) -> dict[str, Any]:
        return self._run(self._session.tree())

    def user_messages(self) -> list[dict[str, Any]]:
        return self._run(self._session.user_messages())

    def rewind_preview(self, entry_id: str) -> dict[str, Any]:
        return self._run(self._session.rewind_preview(entry_id))

    def rewind(self, entry_id: str, restore: str = "both") -> dict[str, Any]:
        return self._run(self._session.rewind(entry_id, restore))

    def undo_rewind(self) -> dict[str, Any]:
        return self._run(self._session.undo_rewind())

    def navigate_tree(self, entry_id: str) -> dict[str, Any]:
        return self._run(self._session.navigate_tree(entry_id))

    def fork(self, entry_id: str) -> dict[str, Any]:
        return self._run(self._session.fork(entry_id))

    def wait_settled(self) -> PromptResult | None:
        return self._run(self._session.wait_settled())

    def clear_queue(self) -> list[QueuedInput]:
        return self._call(self._session.clear_queue)

    def edit(self, entry_id: int, text: str) -> None:
        self._call(self._session.edit, entry_id, text)

    def set_mode(self, entry_id: int, mode: QueueMode) -> None:
        self._call(self._session.set_mode, entry_id, mode)

    def move(self, entry_id: int, to: int) -> None:
        self._call(self._session.move, entry_id, to)

    def remove(self, entry_id: int) -> QueuedInput:
        return self._call(self._session.remove, entry_id)

    def set_steering_mode(self, mode: TakeMode) -> None:
        self._call(self._session.set_steering_mode, mode)

    def set_follow_up_mode(self, mode: TakeMode) -> None:
        self._call(self._session.set_follow_up_mode, mode)

    def subscribe(self, callback: Callable[[PublicEvent], object]) -> Callable[[], None]:
        """`callback` runs on the session's thread; keep it quick."""
        unsubscribe = self._call(self._session.subscribe, callback)
        # After `close` there is nothing left to unsubscribe from: a no-op, not an error.
        return lambda: None if self._closed else self._call(unsubscribe)

    def events(self) -> Iterator[PublicEvent]:
        """Every event from this call on (subscribed at once, not at the first `next`), on
        the caller's thread, until the session closes."""
        handed: queue.SimpleQueue[PublicEvent | None] = queue.SimpleQueue()

        async def pump() -> None:
            try:
                async for event in self._session.events():
                    handed.put(event)
            finally:
                handed.put(None)

        async def begin() -> None:
            task = asyncio.ensure_future(pump())
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)
            await asyncio.sleep(0)  # subscribed before the caller goes on

        self._run(begin())

        def drain() -> Iterator[PublicEvent]:
            while (event := handed.get()) is not None:
                yield event

        return drain()

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Abort anything running, wait for it to settle, stop the session's thread."""
        if self._closed:
            return
        try:
            self._run(self._session.aclose())
        finally:
            self._closed = True
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> SyncAgentSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
