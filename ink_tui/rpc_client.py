"""A small client for `ink --mode rpc`: spawn it, send commands, read events.

    async with RpcClient.spawn(["--base-url", url, "--model", "m"], cwd=project) as ink:
        await ink.command("prompt", message="add a test")
        settled = await ink.wait_settled()

`command` returns the response's `data` and raises `RpcError` with the response's
`error`; events arrive through `events()` (or are waited for with `wait_for`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ink_tui.opening import Opening

Event = dict[str, Any]

# Protocol lines can be long (a whole file read by a tool); never cut one.
_LINE_LIMIT = 64 * 1024 * 1024


class RpcError(Exception):
    """A command the session refused; `command` names it."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command


class RpcClient:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._events: list[Event] = []
        self._changed = asyncio.Condition()
        self._settled_taken = 0
        self._reader = asyncio.ensure_future(self._read())
        self.closed = False

    @classmethod
    def spawn(
        cls,
        args: Sequence[str] = (),
        *,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
        command: Sequence[str] | None = None,
    ) -> Opening[RpcClient]:
        """Start `ink --mode rpc ARGS` (by default with this Python interpreter)."""
        argv = [*(command or [sys.executable, "-m", "ink_tui"]), "--mode", "rpc", *args]
        return Opening(cls._spawn(argv, cwd, env), RpcClient.close)

    @classmethod
    async def _spawn(
        cls, argv: list[str], cwd: str | Path | None, env: dict[str, str] | None
    ) -> RpcClient:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            limit=_LINE_LIMIT,
        )
        return cls(process)

    # -- commands ------------------------------------------------------------------------

    async def send(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send one command (an `id` is added) and return the whole response."""
        command = dict(command)
        command_id = str(command.setdefault("id", f"c{next(self._ids)}"))
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[command_id] = future
        await self.send_raw(json.dumps(command) + "\n")
        return await future

    async def send_raw(self, line: str) -> None:
        """Write `line` as it is (tests use it for malformed input)."""
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode())
        await self.process.stdin.drain()

    async def command(self, type_: str, **fields: Any) -> Any:
        response = await self.send({"type": type_, **fields})
        if not response.get("success"):
            raise RpcError(type_, str(response.get("error")))
        return response.get("data")

    # -- events --------------------------------------------------------------------------

    @property
    def seen(self) -> list[Event]:
        """Every event so far, in order."""
        return list(self._events)

    async def wait_for(
        self, predicate: Callable[[Event], bool], *, after: int = 0, within: float = 30.0
    ) -> Event:
        """The first event from index `after` on that matches `predicate`."""

        async def scan() -> Event:
            index = after  # each event is looked at once, however often we wake
            async with self._changed:
                while True:
                    while index < len(self._events):
                        event = self._events[index]
                        index += 1
                        if predicate(event):
                            return event
                    if self.closed:
                        raise EOFError("ink exited before the event arrived")
                    await self._changed.wait()

        return await asyncio.wait_for(scan(), within)

    async def wait_settled(self, *, after: int | None = None, within: float = 30.0) -> Event:
        """The next `agent_settled` this client has not handed out yet (one call per
        prompt, in order), or the first one from event index `after` on."""
        if after is not None:
            return await self.wait_for(
                lambda e: e["type"] == "agent_settled", after=after, within=within
            )
        wanted = self._settled_taken
        count = 0

        def nth_settled(event: Event) -> bool:
            nonlocal count
            if event["type"] != "agent_settled":
                return False
            count += 1
            return count > wanted

        event = await self.wait_for(nth_settled, within=within)
        self._settled_taken += 1
        return event

    async def events(self) -> AsyncIterator[Event]:
        """Every event from the first one on, until ink exits."""
        index = 0
        while True:
            async with self._changed:
                while index >= len(self._events) and not self.closed:
                    await self._changed.wait()
                batch = self._events[index:]
            if not batch and self.closed:
                return
            for event in batch:
                yield event
            index += len(batch)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            while line := await self.process.stdout.readline():
                message = json.loads(line)
                if message.get("type") == "response":
                    future = self._waiting.pop(str(message.get("id")), None)
                    if future is not None and not future.done():
                        future.set_result(message)
                        continue
                async with self._changed:
                    self._events.append(message)
                    self._changed.notify_all()
        finally:
            async with self._changed:
                self.closed = True
                self._changed.notify_all()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(EOFError("ink exited before answering"))

    # -- closing -------------------------------------------------------------------------

    async def close(self, within: float = 30.0) -> int:
        """Close stdin (ink aborts, settles and exits) and return the exit status."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            code = await asyncio.wait_for(self.process.wait(), within)
        except TimeoutError:
            self.process.kill()
            code = await self.process.wait()
        with contextlib.suppress(Exception):
            await self._reader
        return code

    async def __aenter__(self) -> RpcClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
