"""RPC mode's session loop: commands from stdin's lines, answers and events to the writer.

`rpc_mode.main` sets the process up and runs `run_rpc`; docs/rpc.md is the protocol.
A dialect (`Dialect`: ink's own, or pi's) chooses the command table and how the one
public event stream is written; the framing, the loop and the ending are the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from ink_tui.api.session import AgentSession
from ink_tui.core import strict_json
from ink_tui.modes.rpc_commands import CommandError, SessionHost
from ink_tui.modes.rpc_dialects import INK, Dialect
from ink_tui.modes.rpc_signals import EXIT_SIGNALS
from ink_tui.modes.rpc_writer import LineWriter

log = logging.getLogger(__name__)


class RpcHost(SessionHost):
    def __init__(
        self,
        session: AgentSession,
        writer: LineWriter,
        open_args: dict[str, Any],
        dialect: Dialect = INK,
    ):
        self.session = session
        self._writer = writer
        self._open_args = open_args
        self._dialect = dialect
        self._unsubscribe = session.subscribe(dialect.events(session, writer.send))

    async def replace(self, *, resume: str | None) -> AgentSession:
        args = {**self._open_args, "resume": resume, "continue_": False}
        fresh = await AgentSession.open(**args)
        old = self.session
        self._unsubscribe()
        await old.aclose()
        self.session = fresh
        self._unsubscribe = fresh.subscribe(self._dialect.events(fresh, self._writer.send))
        return fresh


async def run_rpc(
    open_args: dict[str, Any],
    stdin: IO[bytes],
    writer: LineWriter,
    *,
    early_signal: Callable[[], signal.Signals | None] = lambda: None,
    restore_signals: Callable[[], None] = lambda: None,
    dialect: Dialect = INK,
) -> int:
    """The session until stdin ends or an exit signal comes; the exit status.

    `early_signal()` names an exit signal that came before this loop could take them
    (`rpc_mode.main` records those from its first line on); `restore_signals()` puts
    that recording back once the loop's own handlers are gone, so one that comes while
    the session closes still sets the status."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    exit_code = 0

    def on_signal(signum: signal.Signals) -> None:
        nonlocal exit_code
        exit_code = EXIT_SIGNALS[signum]
        stop.set()

    # Taken before the session opens (opening may take a while): a signal then still
    # ends the session as one during a run does.
    for signum in EXIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal, signum)
    early = early_signal()
    if early is not None:
        on_signal(early)
    try:
        return await _serve(open_args, stdin, writer, stop, dialect) or exit_code
    finally:
        for signum in EXIT_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        restore_signals()


async def _serve(
    open_args: dict[str, Any],
    stdin: IO[bytes],
    writer: LineWriter,
    stop: asyncio.Event,
    dialect: Dialect,
) -> int:
    try:
        session = await AgentSession.open(**open_args)
    except Exception as error:  # a bad config or session id: say it on the protocol too
        writer.send(_response(None, "start", error=f"could not start: {error}"))
        print(f"ink: {error}", file=sys.stderr)
        return 2
    host = RpcHost(session, writer, open_args, dialect)
    for warning in session.warnings:
        print(f"ink: {warning}", file=sys.stderr)

    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    _start_reader(stdin, loop, lines)
    # `abort` answers once settled, and `bash` once it ran: those (the dialect's
    # `beside`) run beside the reader so that the driver can still edit the queue meanwhile.
    running: set[asyncio.Task[None]] = set()
    stopping = asyncio.ensure_future(stop.wait())
    try:
        while True:
            getting = asyncio.ensure_future(lines.get())
            done, _ = await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if getting not in done:
                getting.cancel()
                break
            raw = getting.result()
            if raw is None:
                break
            command = _parse(raw, writer)
            if command is None:
                continue
            task = asyncio.ensure_future(_answer(host, command, writer, dialect))
            running.add(task)
            task.add_done_callback(running.discard)
            if command.get("type") not in dialect.beside:
                await task
    finally:
        stopping.cancel()
        # Settle whatever runs, then close: nothing is left running or unsaved.
        await host.session.aclose()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
    return 0


def _parse(raw: bytes, writer: LineWriter) -> dict[str, Any] | None:
    text = raw.decode("utf-8", "replace")
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    if not text.strip():
        return None
    try:
        # Strict: NaN/Infinity and absurd nesting are refused with a message, never a
        # traceback (docs/rpc.md, "Strict JSON").
        command = strict_json.loads(text)
    except ValueError as error:
        writer.send(_response(None, "parse", error=f"not JSON: {error}"))
        return None
    if not isinstance(command, dict):
        writer.send(_response(None, "parse", error="a command must be a JSON object"))
        return None
    if not isinstance(command.get("type"), str):
        writer.send(_response(command.get("id"), "parse", error="`type` (a string) is missing"))
        return None
    return command


async def _answer(
    host: SessionHost, command: dict[str, Any], writer: LineWriter, dialect: Dialect
) -> None:
    name = command["type"]
    try:
        data = await dialect.dispatch(host, command)
    except CommandError as error:
        writer.send(_response(command.get("id"), name, error=str(error)))
    except Exception as error:
        log.exception("rpc command %s failed", name)
        writer.send(_response(command.get("id"), name, error=f"{type(error).__name__}: {error}"))
    else:
        writer.send(_response(command.get("id"), name, data=data))


def _response(
    command_id: Any, command: str, *, data: Any = None, error: str | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {"type": "response", "command": command}
    if command_id is not None:
        response["id"] = command_id
    response["success"] = error is None
    if error is not None:
        response["error"] = error
    elif data is not None:
        response["data"] = data
    return response


def _start_reader(
    stdin: IO[bytes], loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[bytes | None]
) -> None:
    """Read stdin on a thread (pipes, files and terminals alike), split on `\n` only.

    Raw `os.read`, not the buffered file: a thread blocked inside the buffered reader
    holds its lock, and the interpreter aborts when it exits while one is held.
    """
    fd = stdin.fileno()

    def read() -> None:
        # The pieces of a line not yet ended: a long line is joined once, not re-split.
        pieces: list[bytes] = []
        try:
            while chunk := os.read(fd, 1 << 16):
                *complete, rest = chunk.split(b"\n")
                if complete:
                    complete[0] = b"".join([*pieces, complete[0]])
                    pieces = []
                    for raw in complete:
                        loop.call_soon_threadsafe(lines.put_nowait, raw)
                if rest:
                    pieces.append(rest)
            if pieces:
                loop.call_soon_threadsafe(lines.put_nowait, b"".join(pieces))
        except OSError:
            pass
        finally:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read, name="rpc-stdin", daemon=True).start()
