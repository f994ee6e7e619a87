"""What happens after the first frame: the controller, the session, the extensions.

The first frame imports nothing of the loop, providers, tools or session store
(`ui/preload.py` says why). Right after it, a worker thread imports them and reads the
files start-up needs (the input history, the session `ink -c`/`-r` resumes); then, back
on the event loop, the controller is built, the session opened and the extensions loaded.
Lines submitted before that (typed during the first frame) wait here and are submitted
once the controller exists, in order.

A resumed session shows its end in the first frames: the file's last entries are read
from its end (`session_tail`) as the app is composed, and drawn in a preview transcript
over the real one (only as many as fill the screen). Once they are on screen and typing
has paused (`QUIET_S`) the thread reads the whole file, and its transcript is built
behind the preview a few milliseconds at a time (keys are handled in between); then it
takes the preview's place, and the controller, given the session's history, is built.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual.events import Resize
from textual.worker import WorkerCancelled, WorkerFailed

from ink_tui.ui.startup import (
    AppSessions,
    read_input_history,
    read_planned_session,
    read_planned_tail,
)
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from textual.worker import Worker

    from ink_tui.control.bus import EventBus
    from ink_tui.control.controller import RunController
    from ink_tui.core.messages import QueueMode
    from ink_tui.session.session_reader import LoadedSession
    from ink_tui.ui.app_host import StartHost

# The class the real transcript wears while a preview of a resumed session covers it.
BEHIND = "-behind-preview"
PREVIEW_ID = "resume-preview"
# How long the preview may take to be drawn before the rest goes on anyway, and how often
# to look.
TAIL_WAIT_S = 1.0
TAIL_POLL_S = 0.004
# Once the end is on screen the whole file is read on a thread, which takes turns with
# the UI's loop for the interpreter (every loop iteration then waits up to the 5 ms
# switch interval, and a key's way to the screen takes several): a key typed then took
# 25-70 ms to show. The read waits until typing has paused this long (the user's first
# keys usually come right after the end shows), but no longer than QUIET_MAX_S.
QUIET_S = 0.1
QUIET_MAX_S = 1.0
# Rows of the screen that are not the transcript's: the input (one line in its border),
# the hint row and the status bar.
CHROME_ROWS = 5

MakeController = Callable[["EventBus"], "RunController"]


class ResumePreview(Transcript):
    """The preview of a resumed session's end: measured as soon as it has a size.

    A transcript measures its blocks at its next frame timer after a resize, a frame
    later, and the loop idled until then; the preview is what a resume shows first.
    """

    def on_resize(self, event: Resize) -> None:
        self.flush_now()


class AppStart:
    def __init__(self, app: StartHost, make_controller: MakeController, freeze_heap: bool) -> None:
        self.app = app
        self._make_controller = make_controller
        # Only for a process that runs one app (`ink`): frozen objects are never freed.
        self._freeze_heap = freeze_heap
        if freeze_heap:
            from ink_tui.fastpaths import gc_policy

            gc_policy.own_process()
        # Why the controller could not be built, if it could not.
        self._failure: str | None = None
        # What was sent before the controller existed, in order: lines to submit and
        # slash commands to run (`later`).
        self._early: list[tuple[str, QueueMode] | Callable[[], None]] = []
        # The resumed session, once drawn (before the controller exists).
        self._shown: LoadedSession | None = None
        # Its end, drawn at once while the rest is read and built (`preview`).
        self._preview: Transcript | None = None
        self._building: Worker[None] | None = None
        self._tail_drawn = threading.Event()
        # What runs once a resumed session's end is drawn and typing has paused.
        self._then: Callable[[], None] = lambda: None
        self._last_input = 0.0

    def preview(self, transcript: Transcript) -> Transcript | None:
        """A resumed session's end, to compose over `transcript` in the first frame (the
        last entries only, read from the end of the file); None for other plans."""
        width, height = self.app.size
        screen = (width, height - CHROME_ROWS) if width and height > CHROME_ROWS else None
        tail = read_planned_tail(self.app.plan, screen)
        if not tail:
            return None
        from ink_tui.session.entries import AssistantEntry
        from ink_tui.ui.session_replay import replay

        if any(isinstance(entry, AssistantEntry) and entry.message.text for entry in tail):
            # Its answers are markdown: imported now, before the first frame, rather than
            # in one long step after it, which made the screen's 60 Hz update timer late
            # and (Textual then skips a frame more than it must) the first key wait.
            import rich.markdown  # noqa: F401

        preview = self._preview = ResumePreview(self.app.bus, id=PREVIEW_ID)
        # Drawn once laid out; the real transcript is built behind it (`_build_session`).
        replay(preview, tail)
        transcript.add_class(BEHIND)
        return preview

    def begin(self, then: Callable[[], None] = lambda: None) -> None:
        """Right after the first frame: start the thread; `then` runs once a resumed
        session's end is on screen and typing has paused (at once for other plans)."""
        if self._preview is not None:
            # Laid out by now: measured at once, not at the transcript's next frame timer.
            self._preview.flush_now()
            # Run by the thread: `then` (the completion menu: a layout) waits with the
            # read for typing to pause, even if the preview is given up on.
            self._then = then
            self._when_drawn(self._preview, time.monotonic() + TAIL_WAIT_S)
        else:
            then()
            self._tail_drawn.set()
        self.app.run_worker(
            self._import_then_start, thread=True, group="start", exit_on_error=False
        )

    def note_input(self) -> None:
        """The user edited the input: a resumed session's read waits for a pause."""
        self._last_input = time.monotonic()

    def submit(self, text: str, mode: QueueMode) -> None:
        """Submit `text` to the controller, or keep it until the controller exists."""
        if self._failure is not None:
            # Nothing can run it: the text goes back where it was typed.
            self.app.prompt.restore(text)
            self.app.query_one(Transcript).add_notice(self._failure, "error")
        elif self.app.controller is None:
            self._early.append((text, mode))
        else:
            self.app.controller.submit(text, mode)

    def later(self, command: Callable[[], None]) -> None:
        """Run a slash command now, or, typed before the controller exists (`/resume ID`
        during the first frame), once it does, in order with the lines sent meanwhile."""
        if self.app.controller is None and self._failure is None:
            self._early.append(command)
        else:
            command()

    def _import_then_start(self) -> None:
        """On a thread: read a resumed session whole and have it built, import what the
        controller needs, then build the controller on the loop."""
        from ink_tui.ui.preload import import_controller_modules

        app = self.app
        history: tuple[list[str], str | None] = ([], None)
        session: LoadedSession | Exception | None = None
        try:
            # Not before the session's end is on screen: reading the file meanwhile would
            # take turns with drawing it, nor while the user types (`QUIET_S`). Then the
            # session, which needs only the transcript; the controller's imports follow
            # while it is built.
            self._tail_drawn.wait(TAIL_WAIT_S)
            if self._preview is not None:
                self._wait_for_quiet(time.monotonic() + QUIET_MAX_S)
                app.call_from_thread(self._then)
            session = read_planned_session(app.plan)
            built = session is not None and not isinstance(session, Exception)
            if self._preview is not None and built:
                app.call_from_thread(self._build_session, session)
            import_controller_modules()
            history = read_input_history(app.plan, app.workspace, app.session_root)
        finally:
            # Even if an import failed: building the controller reports it properly.
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                app.call_from_thread(self._start_when_built, *history, session)

    def _wait_for_quiet(self, give_up: float) -> None:
        while (now := time.monotonic()) < give_up:
            quiet = now - self._last_input
            if quiet >= QUIET_S:
                return
            time.sleep(min(QUIET_S - quiet, give_up - now))

    def _when_drawn(self, preview: Transcript, give_up: float) -> None:
        """Once the preview's lines are measured, after the frame that shows them: tell
        the thread."""
        drawn = preview.virtual_size.height > 0 or not preview.is_attached
        if drawn or time.monotonic() > give_up:
            self.app.call_after_refresh(self._after_preview)
        else:
            preview.set_timer(TAIL_POLL_S, lambda: self._when_drawn(preview, give_up))

    def _after_preview(self) -> None:
        # The quiet pause counts from when the end is on screen.
        self._last_input = max(self._last_input, time.monotonic())
        self._tail_drawn.set()

    def _build_session(self, session: LoadedSession) -> None:
        """Build the whole transcript behind the preview, a step at a time."""
        from ink_tui.ui.session_replay import show_session_in_steps

        async def build() -> None:
            await show_session_in_steps(self.app.query_one(Transcript), session)
            self._shown = session
            await self._end_preview()

        # A worker: leaving the app mid-build cancels it.
        self._building = self.app.run_worker(build(), group="start", exit_on_error=False)

    async def _end_preview(self) -> None:
        """The real transcript in the preview's place (built, or with why it was not)."""
        preview, self._preview = self._preview, None
        if preview is not None:
            self.app.query_one(Transcript).remove_class(BEHIND)
            await preview.remove()

    async def _start_when_built(
        self,
        input_history: Sequence[str] = (),
        history_warning: str | None = None,
        session: LoadedSession | Exception | None = None,
    ) -> None:
        if self._building is not None:
            # Should the build fail, the session is opened the plain way below, which
            # shows it (or says why it cannot).
            with contextlib.suppress(WorkerFailed, WorkerCancelled):
                await self._building.wait()
        await self._end_preview()
        self.app.mount_run_widgets()
        try:
            self._start_controller(input_history, history_warning, session)
        except Exception as exc:
            self._failed_to_start(exc)
        finally:
            self.app.run_worker(self._prepare_heap, thread=True, group="heap", exit_on_error=False)

    def _failed_to_start(self, error: Exception) -> None:
        """The controller (or the session) could not be built: say why on screen, and
        keep what was typed meanwhile in the input."""
        import traceback

        self.app.controller = None
        where = traceback.extract_tb(error.__traceback__)[-1]
        self._failure = (
            f"ink could not start its run controller: {type(error).__name__}: {error} "
            f"({where.filename}:{where.lineno}). Nothing can run; what you type stays in "
            "the input. Quit with Ctrl+C twice and start again once the cause is fixed."
        )
        self.app.query_one(Transcript).add_notice(self._failure, "error")
        items, self._early = self._early, []
        early = "\n\n".join(item[0] for item in items if isinstance(item, tuple))
        if early:
            self.app.prompt.restore(early)
        for item in items:
            if not isinstance(item, tuple):
                item()

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

            app.binding = SessionBinding(
                app.bus, app.workspace, root=app.session_root, controller=controller
            )
            for text in input_history:
                app.prompt.input_history.add(text)
        status = app.query_one(StatusBar)
        if app.config is not None:
            status.usage.prices = app.config.prices
        app.sessions = AppSessions(
            app.binding, controller, transcript, app.prompt, on_usage=status.restart_usage
        )
        app.sessions.start(app.plan, session, shown=self._shown is session)
        for notice in app.config_notices:
            transcript.add_notice(notice, "warning")
        if history_warning:
            transcript.add_notice(history_warning[:1].upper() + history_warning[1:], "warning")
        if app.plan.mode == "pick":
            app.call_after_refresh(app.session_actions.pick)
        app.extensions.start(controller)
        items, self._early = self._early, []
        for item in items:
            if isinstance(item, tuple):
                controller.submit(*item)
            else:
                item()

    def _prepare_heap(self) -> None:
        """On a thread: load and warm the answer renderer, then (for `ink`) freeze the
        start-up heap and collect garbage again.

        `ink` collects nothing from its start until here (`cli.main`): the objects made
        so far live as long as the app, and passes over them cost the first frame ~40 ms
        and a resumed session's build far more. They are frozen without a full pass
        first: that pass holds the interpreter ~70 ms (longer with a big session
        resumed), just when the user starts typing, to free next to nothing.
        """
        from ink_tui.fastpaths import gc_policy
        from ink_tui.ui.heap import warm_up_renderer

        try:
            warm_up_renderer(self.app.current_theme.dark)
        finally:
            if self._freeze_heap:
                gc_policy.freeze_startup_heap()
            gc_policy.resume()
