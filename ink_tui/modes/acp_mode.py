"""`ink acp`: ink as an Agent Client Protocol agent on stdio, for editors (docs/acp.md).

What it promises the process around it, as RPC mode does:

- stdout carries the protocol's JSON-RPC lines only: logs and stray prints go to
  stderr (the real stdout is kept on a file descriptor of its own).
- stdin closed (the editor went away): every session is aborted, settled and saved,
  the processes its commands left are stopped, exit 0. SIGINT / SIGTERM / SIGHUP: the
  same, exit 130 / 143 / 129, from the first line of `main` on.
- The `ink` command's process guards (subreaper, exit paths) are installed, as for RPC
  mode; the sessions it opens install none of their own.

The methods are `acp_agent.InkAgent`'s; the SDK (`agent-client-protocol`) does the
JSON-RPC framing and the schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any, cast

from ink_tui.modes.rpc_signals import EXIT_SIGNALS, EarlySignals

# The SDK's own default (50 MB): an editor may embed whole files in a prompt.
LINE_LIMIT = 50 * 1024 * 1024


def main(workspace: Path, flags: dict[str, Any], *, record: bool) -> int:
    """Entry point for `ink acp`: keep the real stdout for protocol lines only."""
    early = EarlySignals()
    early.install()

    from ink_tui import event_loop
    from ink_tui.tools.job_exit import guard_exit

    guard_exit()
    protocol_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    open_args = {**flags, "record": record}
    # Programs are asked before bash/write/edit unless told otherwise: here the editor
    # asks its user (session/request_permission).
    if open_args.get("approval") is None:
        open_args["approval"] = "ask"
    del workspace  # each session/new names its own (`cwd`)
    try:
        code = event_loop.run(_serve(open_args, protocol_fd, early))
    finally:
        with contextlib.suppress(OSError):
            os.close(protocol_fd)
    if code == 0 and early.received is not None:
        return EXIT_SIGNALS[early.received]
    return code


async def _serve(open_args: dict[str, Any], protocol_fd: int, early: EarlySignals) -> int:
    from acp.agent.connection import AgentSideConnection
    from acp.interfaces import Agent

    from ink_tui.modes.acp_agent import InkAgent

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    exit_code = 0

    def on_signal(signum: signal.Signals) -> None:
        nonlocal exit_code
        exit_code = EXIT_SIGNALS[signum]
        stop.set()

    for signum in EXIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal, signum)
    if early.received is not None:
        on_signal(early.received)

    try:
        reader, writer = await _streams(protocol_fd)
    except (ValueError, OSError) as error:  # a terminal or a file, not an editor's pipe
        print(
            f"ink acp: stdin and stdout must be pipes from an ACP client ({error})", file=sys.stderr
        )
        return 2
    agent = InkAgent(open_args)
    # InkAgent implements the methods it supports; for the others the SDK's router
    # answers "method not found", so it is not the whole `acp.Agent` protocol.
    connection = AgentSideConnection(cast("Agent", agent), writer, reader, listening=False)
    listening = asyncio.ensure_future(connection.listen())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({listening, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        # Settle and save every session while the client can still read its updates.
        await agent.aclose()
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await listening
        with contextlib.suppress(Exception):
            await connection.close()
        for signum in EXIT_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        early.install()
    return exit_code


async def _streams(protocol_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and the kept stdout as asyncio streams (the SDK's helper would write to
    `sys.stdout`, which now goes to stderr)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = os.fdopen(protocol_fd, "wb", buffering=0, closefd=False)
    # StreamReaderProtocol brings the flow control StreamWriter.drain() waits on.
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), out
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)
