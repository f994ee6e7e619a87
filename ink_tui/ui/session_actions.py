"""Listing, picking and resuming saved sessions, with the file work on threads.

Listing reads every session file of the workspace (for its message count), and a big
session takes a while to parse: both are far too much for the UI's event loop, so they
run on worker threads and hand their result back to the loop. `AppSessions`
(`ui/startup.py`) then shows what was read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ink_tui.ui.startup import read_session
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from ink_tui.session.summary import SessionSummary
    from ink_tui.ui.app_host import AppHost


class SessionActions:
    def __init__(self, app: AppHost) -> None:
        self.app = app

    def resume(self, path: Path) -> None:
        """Resume the session in `path` (/resume): read on a thread, then shown."""
        if self.app.sessions is not None:
            self.app.run_worker(
                partial(self._read_then_open, path),
                thread=True,
                group="resume",
                exclusive=True,
                exit_on_error=False,
            )

    def _read_then_open(self, path: Path) -> None:
        binding = self.app.binding
        read = read_session(path, binding.writer if binding is not None else None)
        if self.app.sessions is not None:
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.app.call_from_thread(self.app.sessions.open, path, read)

    def listed(self, then: Callable[[list[SessionSummary]], None]) -> None:
        """Call `then` with this workspace's saved sessions, listed on a thread."""
        app = self.app

        def listing() -> None:
            from ink_tui.session.catalog import list_sessions

            binding = app.binding
            try:
                if binding is not None and binding.writer is not None:
                    # The current session's last entries may still wait on its writer.
                    binding.writer.drain()
            except OSError as error:
                # A write that failed is reported once: here, so it must be shown.
                with contextlib.suppress(RuntimeError):
                    app.call_from_thread(self._session_file_failed, error)
            sessions = list_sessions(app.workspace, app.session_root)
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                app.call_from_thread(then, sessions)

        app.run_worker(listing, thread=True, group="sessions", exit_on_error=False)

    def _session_file_failed(self, error: OSError) -> None:
        self.app.query_one(Transcript).add_notice(f"Session file: {error}", "error")

    def pick(self) -> None:
        """The session picker (/resume without an id, `ink -r`)."""
        self.listed(self._show_picker)

    def _show_picker(self, sessions: list[SessionSummary]) -> None:
        from ink_tui.ui.screens.session_picker import SessionPicker

        binding = self.app.binding
        current = binding.writer.id if binding and binding.writer else None
        sessions = [s for s in sessions if s.id != current]
        if not sessions:
            self.app.query_one(Transcript).add_notice("There is no other session to resume.")
            return
        by_id = {s.id: s for s in sessions}

        def chosen(session_id: str | None) -> None:
            if session_id:
                self.resume(by_id[session_id].path)

        self.app.push_screen(SessionPicker(sessions), chosen)
