"""Print mode (`ink -p`): one prompt in, the answer streamed to stdout.

stdout carries only the answer text, so it can be piped; tool summaries (one line per
call, in call order, from the ordered `tool_end` path), notices and errors go to stderr,
and so does "waiting for the server (N s)" while the server sends nothing (once a few
seconds into a silence, then every quarter of a minute), so a stuck server is not silent.
Exit status: 0 completed, 1 failed (or stopped at max_iterations), 130 interrupted.
The first Ctrl+C aborts the run; a second before it settles exits at once with 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import TextIO

from ink_tui.control.controller import EXIT_INTERRUPTED, RunController
from ink_tui.core.events import (
    CompactionEnd,
    CompactionStart,
    Event,
    MessageEnd,
    Notice,
    RunEnd,
    ServerWaiting,
    StateChange,
    TextDelta,
    ToolEnd,
)
from ink_tui.core.tool_summary import summary_line

# Seconds of silence at which "waiting for the server" is first said, then how often.
WAITING_FIRST_S = 5.0
WAITING_EVERY_S = 15.0


class PrintRenderer:
    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        waiting_first_s: float = WAITING_FIRST_S,
        waiting_every_s: float = WAITING_EVERY_S,
    ) -> None:
        self.out = out
        self.err = err
        self.last_end: RunEnd | None = None
        self._out_at_line_start = True
        # Each reply of a run is its own paragraph.
        self._reply_ended = False
        self._waiting_first_s = waiting_first_s
        self._waiting_every_s = waiting_every_s
        self._next_waiting_s = waiting_first_s
        self._last_waiting_s = 0.0

    def __call__(self, event: Event) -> None:
        if event.agent_id is not None:
            return  # stdout is the main agent's answer; a task call's summary says the rest
        if isinstance(event, TextDelta):
            if event.text:
                if self._reply_ended:
                    self.finish_line()
                    self.out.write("\n")
                    self._reply_ended = False
                self.out.write(event.text)
                self.out.flush()
                self._out_at_line_start = event.text.endswith("\n")
        elif isinstance(event, MessageEnd):
            self._reply_ended = self._reply_ended or bool(event.message.text)
        elif isinstance(event, ToolEnd):
            self._say(summary_line(event.call, event.result, event.duration_s))
        elif isinstance(event, ServerWaiting):
            self._waiting(event)
        elif isinstance(event, CompactionStart):
            window = f" of {event.context_window:,}" if event.context_window else ""
            self._say(f"ink: compacting the conversation (~{event.tokens_before:,}{window} tokens)")
        elif isinstance(event, CompactionEnd) and event.done:
            self._say(f"ink: compacted: ~{event.tokens_before:,} -> ~{event.tokens_after:,} tokens")
        elif isinstance(event, Notice) and event.kind != "interrupting":
            prefix = {"error": "error: ", "warning": "warning: "}.get(event.level, "")
            self._say(f"{prefix}{event.text}")
        elif isinstance(event, RunEnd):
            self.last_end = event
            self.finish_line()

    def finish_line(self) -> None:
        if not self._out_at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._out_at_line_start = True

    def _waiting(self, event: ServerWaiting) -> None:
        if event.over or event.seconds < self._last_waiting_s:
            self._next_waiting_s = self._waiting_first_s  # a new silence starts the count
        self._last_waiting_s = 0.0 if event.over else event.seconds
        if event.over or event.seconds < self._next_waiting_s:
            return
        self._next_waiting_s = event.seconds + self._waiting_every_s
        # Only stderr: stdout is the answer, and a line break there would change it. On a
        # terminal both share, the line starts below the half-written answer line.
        if not self._out_at_line_start and _is_terminal(self.out) and _is_terminal(self.err):
            self.err.write("\n")
        self.err.write(
            f"ink: waiting for the server ({event.seconds:.0f} s; "
            f"gives up at {event.limit_s:.0f} s)\n"
        )
        self.err.flush()

    def _say(self, line: str) -> None:
        # Keep the answer's lines whole when both streams share one terminal.
        self.finish_line()
        self.err.write(line + "\n")
        self.err.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or stream-like object
        return False


def exit_status(end: RunEnd | None) -> int:
    if end is None or end.stop_reason is None:
        return 1
    if end.stop_reason == "aborted":
        return EXIT_INTERRUPTED
    return 0 if end.stop_reason == "completed" else 1


async def run_print(
    controller: RunController,
    prompt: str,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    *,
    on_ready: Callable[[RunController], object] | None = None,
) -> int:
    """`on_ready` runs once the renderer listens, before the prompt (loading extensions,
    whose notices must reach stderr)."""
    renderer = PrintRenderer(out, err)
    controller.bus.subscribe(renderer)

    def exit_now(event: Event) -> None:
        if isinstance(event, StateChange) and event.state == "exited":
            renderer.finish_line()
            out.flush()
            err.flush()
            # A second Ctrl+C means now: do not wait for tools that ignore the abort.
            os._exit(event.exit_code or 0)

    controller.bus.subscribe(exit_now)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, controller.interrupt)
    if controller.provider.is_demo:
        err.write("ink: no model configured; using the offline demo model.\n")
    try:
        if on_ready is not None:
            on_ready(controller)
        controller.submit(prompt)
        await controller.wait_idle()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        await controller.aclose()
    return exit_status(renderer.last_end)
