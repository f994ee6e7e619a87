"""How `ink serve` stops: on SIGINT (Ctrl+C), SIGTERM and SIGHUP (the terminal closed).

What it promises, for each of the three:

- The first one stops the server cleanly, as RPC mode does: new requests are refused
  (`503 stopping`, and uvicorn closes the listening socket), every running run is
  aborted (the model's stream closed, every tool's process group killed with the usual
  grace) and settles, then every session's jobs (what its commands left running) are
  stopped and its file is closed (flushed: the run's end is in it) and unlocked, and
  every SSE stream ends, after its session's last events (`agent_settled`). Then the
  process exits with 130 / 143 / 129 (128 + the signal), not by the signal.
- A second one, while that shutdown waits (a command that ignores SIGTERM, a stuck
  model), stops at once, as the TUI's second Ctrl+C does: every session exits (running
  commands SIGKILLed, jobs stopped, what its file was sent written out), then the
  process leaves with the second signal's status.
- A signal the server was started with ignored (`nohup ink serve`) is left ignored.

The handlers are the event loop's (`loop.add_signal_handler`), in place of uvicorn's
own: `Server.capture_signals` is where uvicorn installs its handlers, and re-raises
the signal once it has shut down; `StoppingServer` installs these there instead.
A stream ends when its session's log closes, once its last events are in it (the
server's own SSE response, `sse_response.py`, listens for no signal of uvicorn's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from ink_tui.serve.json_response import StrictJSONResponse
from ink_tui.serve.sessions import ServedSession, SessionRegistry

log = logging.getLogger(__name__)

# 128 + the signal, as a shell reports a process that died of it (and as RPC mode exits).
EXIT_SIGNALS: dict[signal.Signals, int] = {
    signal.SIGINT: 130,
    signal.SIGTERM: 143,
    signal.SIGHUP: 129,
}


class Stopping:
    """The server's stop: which signal asked for it, and the sessions' shutdown."""

    def __init__(
        self, registry: SessionRegistry, *, exit_now: Callable[[int], object] = os._exit
    ) -> None:
        self.registry = registry
        self.server: uvicorn.Server | None = None
        self.signal: signal.Signals | None = None
        self._exit_now = exit_now
        # Every session open when the stop began: a second signal exits each of them,
        # though the registry has let go of those it is closing.
        self._sessions: list[ServedSession] = []
        self._closing: asyncio.Future[None] | None = None

    @property
    def stopping(self) -> bool:
        return self.signal is not None

    @property
    def exit_code(self) -> int:
        return EXIT_SIGNALS[self.signal] if self.signal is not None else 0

    @contextlib.contextmanager
    def handling_signals(self) -> Iterator[None]:
        """While in it: the three signals are `on_signal`'s, save those ignored at start;
        after it, each has its handler from before again."""
        loop = asyncio.get_running_loop()
        before: dict[signal.Signals, Any] = {}
        for signum in EXIT_SIGNALS:
            try:
                handler = signal.getsignal(signum)
                if handler == signal.SIG_IGN:
                    continue  # nohup: whoever started us wants it ignored
                loop.add_signal_handler(signum, self.on_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # not the main thread, or no signals here
            before[signum] = handler
        try:
            yield
        finally:
            for signum, handler in before.items():
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(signum)
                    if handler is not None:
                        # The guard's exit path (job_exit) or Python's Ctrl+C again.
                        signal.signal(signum, handler)

    def on_signal(self, signum: signal.Signals) -> None:
        if self.signal is not None:
            self._exit_at_once(signum)
            return
        self.signal = signum
        self._sessions = list(self.registry)
        _say(
            f"ink serve: {signum.name}: stopping (aborting runs, closing sessions); "
            "again to stop at once"
        )
        if self.server is not None:
            # uvicorn's own flag (not its handler): it stops listening and waits for
            # the open requests, the SSE streams among them, which end as below.
            self.server.should_exit = True
        self._closing = asyncio.ensure_future(self.registry.aclose())

    async def finish(self) -> int:
        """Once uvicorn has returned: wait for the sessions to close; the exit status."""
        # Also when uvicorn skipped its lifespan's end; a second call waits for the first.
        await self.registry.aclose()
        return self.exit_code

    def _exit_at_once(self, signum: signal.Signals) -> None:
        code = EXIT_SIGNALS[signum]
        _say(f"ink serve: {signum.name} again: stopping now")
        from ink_tui.tools.job_exit import stop_every_session

        for served in {*self._sessions, *self.registry}:
            try:
                # The TUI's second Ctrl+C: abort, kill the running commands' groups at
                # once and stop the jobs (the exit hooks), write out what the file has.
                served.session.controller.exit(code)
            except Exception:
                log.exception("session %s did not exit cleanly", served.id)
        try:
            stop_every_session()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            self._exit_now(code)


class StoppingServer(uvicorn.Server):
    """uvicorn's server with `Stopping`'s signal handlers in place of its own."""

    def __init__(self, config: uvicorn.Config, stopping: Stopping) -> None:
        super().__init__(config)
        self.stopping = stopping
        stopping.server = self

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        with self.stopping.handling_signals():
            yield


class RefuseWhileStopping:
    """ASGI middleware: once the server is stopping, a new request is answered 503."""

    def __init__(self, app: ASGIApp, stopping: Stopping) -> None:
        self.app = app
        self.stopping = stopping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.stopping.stopping:
            body = {"error": "stopping", "message": "the server is stopping"}
            response = StrictJSONResponse(body, 503, headers={"Connection": "close"})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _say(line: str) -> None:
    # After SIGHUP the terminal may be gone: a line that cannot be written is dropped.
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)
