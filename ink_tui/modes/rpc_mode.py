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
  the same, exit 130/143, from the first line of `main` on (one that comes while the
  session still opens is kept and acted on once it is open). Sessions are recorded as
  the TUI records them.
- Output (`rpc_writer`): every line whole and strict JSON, written from a thread so
  that a reader that stays away never blocks the run.
- `dialect="pi"` (`--rpc-dialect pi`): pi's commands and events over the same loop
  (`rpc_pi_dialect`; docs/rpc.md, "pi's dialect"); the rest above holds alike.

This module is the entry point and imports little: the exit signals (`rpc_signals`) are
taken before the session's modules (a third of a second) load. The loop is
`rpc_loop.run_rpc`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ink_tui.modes.rpc_signals import EXIT_SIGNALS, EarlySignals

if TYPE_CHECKING:
    from ink_tui.modes.rpc_dialects import Dialect


def main(
    workspace: Path,
    flags: dict[str, Any],
    *,
    resume: str | None,
    continue_: bool,
    record: bool,
    dialect: str = "ink",
) -> int:
    """Entry point for `ink --mode rpc`: keep the real stdout for protocol lines only."""
    # First, before anything slow: an early SIGTERM ends ink as a later one does (143).
    # `guard_exit` below then leaves these signals to RPC mode, whose close stops
    # what commands left running.
    early = EarlySignals()
    early.install()

    from ink_tui import event_loop
    from ink_tui.modes.rpc_loop import run_rpc
    from ink_tui.modes.rpc_writer import LineWriter
    from ink_tui.tools.job_exit import guard_exit

    # The `ink` command's process-wide guards (subreaper, exit paths): its entry points
    # install them, the session it opens never does.
    guard_exit()
    protocol_fd = os.dup(sys.stdout.fileno())
    # Anything else that prints (a library, a stray print) lands on stderr.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    writer = LineWriter(protocol_fd)
    # A signal while the last lines wait for a reader that stays away: stop waiting.
    early.on_receive.append(writer.give_up)
    open_args = {
        "workspace": workspace,
        "resume": resume,
        "continue_": continue_,
        "record": record,
        **flags,
    }
    try:
        code = event_loop.run(
            run_rpc(
                open_args,
                sys.stdin.buffer,
                writer,
                early_signal=early.take,
                restore_signals=early.install,
                dialect=dialect_named(dialect),
            )
        )
        writer.close()
    finally:
        with contextlib.suppress(OSError):
            os.close(protocol_fd)
    if code == 0 and early.received is not None:
        return EXIT_SIGNALS[early.received]
    return code


def dialect_named(name: str) -> Dialect:
    """ "ink" (docs/rpc.md) or "pi" (pi's RPC protocol, its own modules, loaded only
    when asked for). Chosen here, so the dialects' shared types import neither."""
    from ink_tui.modes.rpc_dialects import INK

    if name == "ink":
        return INK
    if name == "pi":
        from ink_tui.modes.rpc_pi_dialect import PI

        return PI
    raise ValueError(f"unknown RPC dialect {name!r}: 'ink' or 'pi'")
