"""Keeping the session on disk in step with the app.

- The conversation: a `SessionRecorder` on the bus appends every entry to the session
  file as it happens.
- Queued input and the unsent editor text: written beside the session whenever they
  change, so a crash (even `kill -9`) loses nothing; `ink -c` puts them back.
- The input box history, per workspace.

Disk writes never run on the UI's event loop: the latest state is handed to a thread,
and a burst of keystrokes becomes one write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ink_tui.control.bus import EventBus
from ink_tui.core.events import Event, QueueEntryView, QueueUpdate
from ink_tui.session.input_history_store import InputHistoryStore
from ink_tui.session.pending_input import PendingInput, PendingInputStore
from ink_tui.session.recording import record_session
from ink_tui.session.session_reader import LoadedSession
from ink_tui.session.session_recorder import SessionRecorder
from ink_tui.session.session_writer import SessionWriter

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController
    from ink_tui.session.rewind import SessionRewind

log = logging.getLogger(__name__)

# A burst of typing is saved once it pauses this long.
DRAFT_SAVE_DELAY_S = 0.3


class SessionBinding:
    def __init__(
        self,
        bus: EventBus,
        workspace: Path,
        *,
        root: Path | None = None,
        controller: RunController | None = None,
    ) -> None:
        self.bus = bus
        self.workspace = workspace
        self.root = root
        # With it, the files are checkpointed and the session can go back (`rewind`).
        self.controller = controller
        self.writer: SessionWriter | None = None
        self.rewind: SessionRewind | None = None
        self.history_store = InputHistoryStore(workspace, root=root)
        self._pending: PendingInputStore | None = None
        self._unsubscribe_queue = bus.subscribe(self._on_event)
        self._unsubscribe_recorder: Callable[[], None] | None = None
        self._entries: list[QueueEntryView] = []
        self._draft = ""
        self._dirty = asyncio.Event()
        self._saver: asyncio.Task[None] | None = None
        self._writes: set[asyncio.Future[None]] = set()
        self._last_history_write: asyncio.Future[None] | None = None

    @property
    def path(self) -> Path | None:
        return self.writer.path if self.writer is not None else None

    def start_new(self, model: str) -> None:
        self._attach(SessionWriter.create(self.workspace, model, root=self.root))

    def resume(self, loaded: LoadedSession) -> PendingInput:
        """Append to `loaded`'s file from now on; returns its saved pending input."""
        # `/resume` of the session being written opens the same file: let go of it (and
        # its lock) first, or the lock would refuse the new writer.
        self.close_session()
        self._attach(SessionWriter.open_existing(loaded.path, leaf_id=loaded.leaf_id))
        assert self._pending is not None
        return self._pending.load()

    def _attach(self, writer: SessionWriter) -> None:
        self.close_session()
        self.writer = writer
        if self.controller is not None:
            recording = record_session(
                self.controller,
                writer,
                root=self.root,
                checkpoints=self.controller.settings.checkpoints,
            )
            self.rewind = recording.rewind
            self._unsubscribe_recorder = recording.stop
        else:
            self._unsubscribe_recorder = self.bus.subscribe(SessionRecorder(writer))
        self._pending = PendingInputStore(writer.path)
        if self._saver is None:
            self._saver = asyncio.ensure_future(self._save_loop())

    def record_model_change(self, model: str) -> None:
        if self.writer is not None:
            self.writer.record_model_change(model)

    # -- pending input -----------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, QueueUpdate) and event.agent_id is None:
            # Only the user's own: after a crash they go back into the editor, where an
            # extension's words would pass for the user's.
            self._entries = [e for e in event.entries if e.source == "user"]
            self._dirty.set()

    def set_draft(self, draft: str) -> None:
        if draft != self._draft:
            self._draft = draft
            self._dirty.set()

    async def _save_loop(self) -> None:
        while True:
            await self._dirty.wait()
            await asyncio.sleep(DRAFT_SAVE_DELAY_S)
            self._dirty.clear()
            await self.flush_pending()

    async def flush_pending(self) -> None:
        store, entries, draft = self._pending, list(self._entries), self._draft
        if store is None:
            return
        try:
            await asyncio.to_thread(store.save, entries, draft)
        except OSError:
            log.exception("could not save pending input to %s", store.path)

    # -- input history -----------------------------------------------------------------

    def remember_input(self, text: str) -> None:
        previous = self._last_history_write

        async def append_after_previous() -> None:
            # Each append on its own thread could overtake the one before: chain them,
            # so the history file keeps the order things were sent in.
            if previous is not None:
                with contextlib.suppress(Exception):
                    await previous
            try:
                await asyncio.to_thread(self.history_store.append, text)
            except OSError:
                # An unwritable store was already reported when the session started.
                log.warning("could not save the input history to %s", self.history_store.path)

        task = asyncio.ensure_future(append_after_previous())
        self._last_history_write = task
        # Keep a reference until it is done: the loop holds tasks only weakly.
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    # -- closing -----------------------------------------------------------------------

    def close_session(self) -> None:
        if self.writer is None:
            return
        if self._unsubscribe_recorder is not None:
            self._unsubscribe_recorder()
            self._unsubscribe_recorder = None
        writer, self.writer, self._pending = self.writer, None, None
        self.rewind = None
        # Closed either way; a write that failed on the writer's thread is raised here
        # for the caller to report.
        writer.close()

    async def aclose(self) -> None:
        """Save what is pending, then stop (a clean exit)."""
        await self.flush_pending()
        # The input history's last appends may still be on their way to disk.
        await asyncio.gather(*self._writes, return_exceptions=True)
        if self._saver is not None:
            self._saver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._saver
        self._unsubscribe_queue()
        self.close_session()
