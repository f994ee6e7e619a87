"""RPC mode (`ink --mode rpc`): JSON lines on stdin and stdout, for programs.

What it promises a driver:

- Framing: one JSON object per line, split on `\\n` only (a trailing `\\r` is dropped);
  JSON strings may hold any other separator. stdout carries protocol lines only: logs
  and stray prints go to stderr.
- A command is an object whose `type` names it; an `id` is echoed in its response
  `{"type": "response", "id", "command", "success", "data" | "error"}`. `prompt` answers
  once the prompt is accepted or refused; what happens after arrives as events.
- Events are the public events (`ink_tui.control.public_events`), one per line, in
  order; `agent_settled` is the one "done", once per prompt.
- A busy session refuses `prompt` unless it says `deliver_as` ("steer" | "follow_up"),
  as the Python API and HTTP service do.
- Bad input gets an error response and the session goes on: a line that is not JSON
  (`command: "parse"`), an unknown command, a missing or wrong-typed field, an entry id
  that is gone.
- stdin closed: abort anything running, wait for it to settle, exit 0. SIGINT/SIGTERM:
  the same, exit 130/143. Sessions are recorded as the TUI records them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ink_tui import event_loop
from ink_tui.api.session import AgentSession
from ink_tui.modes.rpc_commands import CommandError, SessionHost, dispatch

log = logging.getLogger(__name__)

# SIGHUP too (the driver's terminal closed): abort, settle and exit like the others.
EXIT_SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


# While events stream, at most one write per this many seconds: each write to the pipe
# wakes the reader, which costs both processes far more than the line itself.
WRITE_GAP_S = 0.001

# One encoder for every line (`json.dumps` with options builds one per call).
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


class LineWriter:
    """Protocol lines to the real stdout, written in one go per turn of the event loop
    (a stream of deltas costs one write, not one per event).

    A line after a quiet moment is written on the next turn of the loop; lines that
    follow it within `gap` seconds are gathered and written `gap` after the last write,
    so a fast stream costs about one write (one wake-up of the reader) per `gap`, and no
    line waits longer than that.
    """

    def __init__(self, out: IO[bytes], gap: float = WRITE_GAP_S) -> None:
        self._out = out
        self._gap = gap
        self._pending: list[str] = []
        self._handle: asyncio.Handle | None = None
        self._last_write = -gap
        self.broken = False

    def send(self, obj: Mapping[str, Any]) -> None:
        self._pending.append(_encode(obj))
        if self._handle is None:
            loop = asyncio.get_running_loop()
            due = self._last_write + self._gap
            if loop.time() >= due:
                self._handle = loop.call_soon(self.flush)
            else:
                self._handle = loop.call_at(due, self.flush)

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.cancel()  # a direct call (the end) comes before the scheduled one
            self._handle = None
        if not self._pending or self.broken:
            self._pending.clear()
            return
        self._pending.append("")  # the newline after the last line
        data = "\n".join(self._pending).encode()
        self._pending.clear()
        try:
            self._out.write(data)
            self._out.flush()
        except (BrokenPipeError, ValueError, OSError):
            # The driver went away; stdin's end will follow and settle the session.
            self.broken = True
        with contextlib.suppress(RuntimeError):
            self._last_write = asyncio.get_running_loop().time()


class RpcHost(SessionHost):
    def __init__(self, session: AgentSession, writer: LineWriter, open_args: dict[str, Any]):
        self.session = session
        self._writer = writer
        self._open_args = open_args
        self._unsubscribe = session.subscribe(writer.send)

    async def replace(self, *, resume: str | None) -> AgentSession:
        args = {**self._open_args, "resume": resume, "continue_": False}
        fresh = await AgentSession.open(**args)
        old = self.session
        self._unsubscribe()
        await old.aclose()
        self.session = fresh
        self._unsubscribe = fresh.subscribe(self._writer.send)
        return fresh


async def run_rpc(open_args: dict[str, Any], stdin: IO[bytes], stdout: IO[bytes]) -> int:
    writer = LineWriter(stdout)
    try:
        session = await AgentSession.open(**open_args)
    except Exception as error:  # a bad config or session id: say it on the protocol too
        writer.send(_response(None, "start", error=f"could not start: {error}"))
        writer.flush()
        print(f"ink: {error}", file=sys.stderr)
        return 2
    host = RpcHost(session, writer, open_args)
    for warning in session.warnings:
        print(f"ink: {warning}", file=sys.stderr)

    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    _start_reader(stdin, loop, lines)
    stop = asyncio.Event()
    exit_code = 0

    def on_signal(signum: signal.Signals) -> None:
        nonlocal exit_code
        exit_code = EXIT_SIGNALS[signum]
        stop.set()

    for signum in EXIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal, signum)

    # `abort` answers once settled, and `bash` once it ran: those run beside the reader
    # so that the driver can still edit the queue meanwhile.
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
            task = asyncio.ensure_future(_answer(host, command, writer))
            running.add(task)
            task.add_done_callback(running.discard)
            if command.get("type") not in ("abort", "bash"):
                await task
    finally:
        stopping.cancel()
        for signum in EXIT_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        # Settle whatever runs, then close: nothing is left running or unsaved.
        await host.session.aclose()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        writer.flush()
    return exit_code


def _parse(raw: bytes, writer: LineWriter) -> dict[str, Any] | None:
    text = raw.decode("utf-8", "replace")
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    if not text.strip():
        return None
    try:
        command = json.loads(text)
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


async def _answer(host: SessionHost, command: dict[str, Any], writer: LineWriter) -> None:
    name = command["type"]
    try:
        data = await dispatch(host, command)
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


def main(
    workspace: Path, flags: dict[str, Any], *, resume: str | None, continue_: bool, record: bool
) -> int:
    """Entry point for `ink --mode rpc`: keep the real stdout for protocol lines only."""
    from ink_tui.tools.job_exit import guard_exit

    # The `ink` command's process-wide guards (subreaper, exit paths): its entry points
    # install them, the session it opens never does.
    guard_exit()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    # Anything else that prints (a library, a stray print) lands on stderr.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    open_args = {
        "workspace": workspace,
        "resume": resume,
        "continue_": continue_,
        "record": record,
        **flags,
    }
    try:
        return event_loop.run(run_rpc(open_args, sys.stdin.buffer, protocol_out))
    finally:
        with contextlib.suppress(OSError):
            protocol_out.close()
