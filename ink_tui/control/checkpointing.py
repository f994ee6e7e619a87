"""The workspace's checkpoint before each tool batch that may change files.

The scheduler awaits `Checkpoints.before_batch` before a batch with any call to a tool
that is not `read_only` (write, edit, bash, task, an extension's tool), once for the
batch, in the top-level run only: a sub-agent works in the same workspace, so the
parent's checkpoint before its `task` batch already holds the files as they were, and
its changes are part of what a rewind of the parent's message restores.

The store (ink_tui/checkpoints) is bound by whoever records the session: without a
session there is nothing to rewind, so nothing is taken. A checkpoint that cannot be
taken (git missing, the workspace too big, over `CHECKPOINT_TIME_LIMIT_S`) never stops
the run: the user allowed the call. They are told once what failed and that a rewind
cannot restore files from then on; no more are tried for that store (each would fail
the same way, at the cost of a wait). An abort while one is taken ends it (git is
killed), and the batch is not run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from ink_tui.core.abort import AbortError, AbortSignal
from ink_tui.core.events import CheckpointTaken, Event, Notice
from ink_tui.core.messages import ToolCall

log = logging.getLogger(__name__)


class Snapshots(Protocol):
    async def snapshot(self, signal: AbortSignal | None = None) -> str: ...


# A checkpoint is incremental and takes far less (benchmarks/fig13_rewind.py); one that
# takes this long is walking a huge folder (ink started in a home directory): the run
# must not wait on it batch after batch.
CHECKPOINT_TIME_LIMIT_S = 20.0


class Checkpoints:
    def __init__(self, emit: Callable[[Event], None]) -> None:
        self._emit = emit
        # Set when a session is recorded (session/recording.py); None: none taken.
        self.store: Snapshots | None = None
        self.last_commit: str | None = None
        # Why checkpoints stopped for this store (said once); None while they work.
        self.failure: str | None = None
        self._failed_store: Snapshots | None = None
        self.time_limit_s = CHECKPOINT_TIME_LIMIT_S

    async def before_batch(self, calls: Sequence[ToolCall], signal: AbortSignal) -> None:
        store = self.store
        if store is None or store is self._failed_store:
            return
        try:
            commit = await asyncio.wait_for(store.snapshot(signal), self.time_limit_s)
        except AbortError:
            raise
        except TimeoutError:
            self._failed(store, f"it took over {self.time_limit_s:g} s (a very big workspace?)")
            return
        except Exception as error:  # any failure: the run goes on without it
            log.debug("checkpoint failed", exc_info=True)
            self._failed(store, str(error) or type(error).__name__)
            return
        self.last_commit = commit
        self._emit(CheckpointTaken(commit=commit))

    def _failed(self, store: Snapshots, reason: str) -> None:
        # Off for this store from now on: a failure that repeats (git missing, a folder
        # too big) would cost every batch its wait and its warning.
        self._failed_store = store
        self.failure = reason
        self._emit(
            Notice(
                text=(
                    f"Checkpoints are off for this session: {reason.rstrip('.')}. A rewind "
                    "can still restore the conversation, but not the files changed from "
                    "here on."
                ),
                level="warning",
                kind="checkpoint",
            )
        )
