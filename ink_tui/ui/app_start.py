"""What happens after the first frame: the controller, the session, the extensions.

The first frame imports nothing of the loop, providers, tools or session store
(`ui/preload.py` says why). Right after it, a worker thread imports them and reads the
files start-up needs (the input history, the session `ink -c`/`-r` resumes); then, back
on the event loop, the controller is built, the session opened and the extensions loaded.
Lines submitted before that (typed during the first frame) wait here and are submitted
once the controller exists, in order.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ink_tui.ui.startup import AppSessions, read_input_history, read_planned_session
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from ink_tui.control.bus import EventBus
    from ink_tui.control.controller import RunController
    from ink_tui.control.input_queue import QueueMode
    from ink_tui.session.session_reader import LoadedSession
    from ink_tui.ui.app_host import StartHost

MakeController = Callable[["EventBus"], "RunController"]


class AppStart:
    def __init__(self, app: StartHost, make_controller: MakeController, freeze_heap: bool) -> None:
        self.app = app
        self._make_controller = make_controller
        # Only for a process that runs one app (`ink`): frozen objects are never freed.
        self._freeze_heap = freeze_heap
        self._early: list[tuple[str, QueueMode]] = []

    def begin(self) -> None:
        """Right after the first frame: `ink` collected no garbage until it (`cli.main`)."""
        gc.enable()
        self.app.run_worker(
            self._import_then_start, thread=True, group="start", exit_on_error=False
        )

    def submit(self, text: str, mode: QueueMode) -> None:
        """Submit `text` to the controller, or keep it until the controller exists."""
        if self.app.controller is None:
            self._early.append((text, mode))
        else:
            self.app.controller.submit(text, mode)

    def _import_then_start(self) -> None:
        """On a thread: import what the controller needs, then build it on the loop."""
        from ink_tui.ui.preload import import_controller_modules

        app = self.app
        history: tuple[list[str], str | None] = ([], None)
        session: LoadedSession | Exception | None = None
        try:
            import_controller_modules()
            history = read_input_history(app.plan, app.workspace, app.session_root)
            session = read_planned_session(app.plan)
        finally:
            # Even if an import failed: building the controller reports it properly.
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                app.call_from_thread(self._start_controller, *history, session)

    def _start_controller(
        self,
        input_history: Sequence[str] = (),
        history_warning: str | None = None,
        session: LoadedSession | Exception | None = None,
    ) -> None:
        """Build the controller and the session; the files were read on a thread."""
        app = self.app
        controller = app.controller = self._make_controller(app.bus)
        controller.spawn = lambda coro: app.run_worker(coro, group="run", exit_on_error=False)
        transcript = app.query_one(Transcript)
        if app.plan.mode != "off":
            from ink_tui.ui.session_binding import SessionBinding

            app.binding = SessionBinding(app.bus, app.workspace, root=app.session_root)
            for text in input_history:
                app.prompt.input_history.add(text)
        app.sessions = AppSessions(app.binding, controller, transcript, app.prompt)
        app.sessions.start(app.plan, session)
        for notice in app.config_notices:
            transcript.add_notice(notice, "warning")
        if history_warning:
            transcript.add_notice(history_warning[:1].upper() + history_warning[1:], "warning")
        if app.plan.mode == "pick":
            app.call_after_refresh(app.session_actions.pick)
        app.extensions.start(controller)
        for text, mode in self._early:
            controller.submit(text, mode)
        self._early.clear()
        app.run_worker(self._prepare_heap, thread=True, group="heap", exit_on_error=False)

    def _prepare_heap(self) -> None:
        """On a thread: load and warm the answer renderer, then (for `ink`) freeze."""
        from ink_tui.ui.heap import freeze_startup_heap, warm_up_renderer

        warm_up_renderer(self.app.current_theme.dark)
        if self._freeze_heap:
            freeze_startup_heap()
