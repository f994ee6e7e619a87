"""One background thread per file that runs its writes and fsyncs in order.

The session writer hands every append and fsync here so that no disk I/O runs on the
caller's thread (the UI's event loop): an fsync on a slow disk takes tens of
milliseconds, long enough to stall typing while a model streams.

- Jobs run one at a time, in the order they were submitted (one worker, one queue).
- The first job that raises stops the writer: later jobs are skipped, since each was
  submitted on the assumption that the ones before it had run (an append after a
  failed one could glue a line onto a torn one). The error is logged at once from the
  thread and kept for the owner to raise (`take_error`).
- `drain` waits until every job submitted before it has run; `stop` drains and ends the
  thread. The thread is a daemon, so a writer that is never stopped cannot hang the
  interpreter's exit, and an `atexit` hook (registered when the first writer starts,
  never at import) drains whatever is still running then: only a killed process (or
  `os._exit`) can lose queued jobs.
"""

from __future__ import annotations

import atexit
import functools
import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

Job = Callable[[], object]


class _Stop:
    """The last item a worker's queue ever holds."""


_STOP = _Stop()

# Workers whose thread runs, for the exit hook. The thread refers to its worker anyway,
# so a weak set would not let one go any sooner.
_running: set[WriterThread] = set()


class WriterThread:
    def __init__(self, name: str) -> None:
        self.name = name
        # Written by the thread before it sets any later barrier, so a caller that
        # returns from `drain` sees the error of every job submitted before it.
        self._error: BaseException | None = None
        self._reported = False
        self._jobs: queue.SimpleQueue[Job | threading.Event | _Stop] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        _drain_at_exit_hook()
        self._thread.start()
        _running.add(self)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def error(self) -> BaseException | None:
        """The error that stopped the writer, or None while all went well."""
        return self._error

    def take_error(self) -> BaseException | None:
        """The error that stopped the writer, the first time it is asked for; else None.

        Owners raise it from their next call, once: every later entry is dropped anyway,
        and raising again at each one (or again at close) would turn one full disk into
        a cascade of failures on the exit paths.
        """
        if self._error is None or self._reported:
            return None
        self._reported = True
        return self._error

    def submit(self, job: Job) -> None:
        """Run `job` on the thread after everything submitted before it."""
        if not self.running:
            raise RuntimeError(f"{self.name} is stopped")
        self._jobs.put(job)

    def drain(self) -> None:
        """Wait until every job submitted so far has run (or been skipped)."""
        if not self.running:
            return
        done = threading.Event()
        self._jobs.put(done)
        done.wait()

    def stop(self) -> None:
        """Drain, then end the thread. Safe to call more than once."""
        if self.running:
            self._jobs.put(_STOP)
            self._thread.join()
        _running.discard(self)

    def _run(self) -> None:
        while True:
            item = self._jobs.get()
            if isinstance(item, _Stop):
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            if self._error is not None:
                continue
            try:
                item()
            # Anything: a thread has no caller to pass it to, and if the thread died,
            # a later `drain` would wait for it forever.
            except BaseException as error:
                self._error = error
                log.error("%s failed; nothing after this is written", self.name, exc_info=error)


@functools.cache
def _drain_at_exit_hook() -> None:
    atexit.register(_drain_at_exit)


def _drain_at_exit() -> None:
    # atexit hooks run while daemon threads still do: a normal exit that skipped a
    # writer's close (an exception on the way out) still writes what was queued.
    for worker in tuple(_running):
        worker.stop()
