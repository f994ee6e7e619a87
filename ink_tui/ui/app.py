"""The full-screen app: composes the widgets and routes between them and the controller.

Behaviour lives elsewhere: run control in `RunController`, drawing in the widgets, which
subscribe to the bus themselves. This class only turns keys and widget messages into
controller calls, and bus events that concern the whole app (exit, restored input) into
app actions.

The controller is built after the first frame (`make_controller`), so that start-up
does not pay for importing the HTTP client, the tools or the session store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.screen import ModalScreen

from ink_tui.control.bus import EventBus
from ink_tui.control.input_queue import QueueMode
from ink_tui.core.events import Event, InputRestored, StateChange
from ink_tui.ui import clock
from ink_tui.ui.command_palette import SlashCommandProvider
from ink_tui.ui.command_runner import CommandRunner, model_label
from ink_tui.ui.file_completion import FileIndex
from ink_tui.ui.keys import install_alt_enter
from ink_tui.ui.slash_commands import (
    RunSlashCommand,
    SlashCommand,
    literal_text,
    parse_slash,
    unknown_message,
)
from ink_tui.ui.startup import AppSessions, SessionPlan, read_session
from ink_tui.ui.widgets.activity_panel import ActivityPanel
from ink_tui.ui.widgets.approval_question import ApprovalQuestion
from ink_tui.ui.widgets.completion_menu import CompletionMenu
from ink_tui.ui.widgets.hint_row import HintRow
from ink_tui.ui.widgets.prompt_input import PromptInput
from ink_tui.ui.widgets.queue_list import QueueList
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.too_small import TooSmall, too_small
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    # For annotations only: the controller module imports the agent loop, which the
    # first frame does not need (make_controller imports it after that frame).
    from ink_tui.control.controller import RunController
    from ink_tui.extensions.host import ExtensionHost
    from ink_tui.extensions.startup import ExtensionOptions, Started
    from ink_tui.session.config import Config
    from ink_tui.session.session_reader import LoadedSession
    from ink_tui.session.summary import SessionSummary
    from ink_tui.ui.session_binding import SessionBinding

MakeController = Callable[[EventBus], "RunController"]

QUIT_WINDOW_S = 2.0
# A second Ctrl+C this soon after the one that aborted a run still means "quit now", even
# if the run settled in between (an aborted stream settles in milliseconds): it must not
# clear the input the settle just restored.
DOUBLE_PRESS_S = 0.5


class InkApp(App[None]):
    """The app returns no value: its exit status is `return_code`."""

    CSS_PATH = "app.tcss"
    TITLE = "ink"
    # Only our commands: the system "Quit" would leave without settling the run.
    COMMANDS: ClassVar = {SlashCommandProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        # The ids are the action names of the config file's [keys] table (set_keymap).
        Binding("ctrl+c", "interrupt", "Interrupt", priority=True, id="interrupt"),
        Binding("escape", "escape", "Interrupt", show=False),
        Binding("ctrl+t", "toggle_thinking", "Thinking", id="toggle_thinking"),
        Binding("ctrl+o", "toggle_folds", "Folds", id="toggle_folds"),
        Binding("ctrl+q", "focus_queue", "Queue", id="focus_queue"),
    ]

    def __init__(
        self,
        make_controller: MakeController,
        *,
        model_label: str,
        is_demo: bool,
        workspace: Path,
        plan: SessionPlan | None = None,
        notices: Sequence[str] = (),
        session_root: Path | None = None,
        config: Config | None = None,
        freeze_startup_heap: bool = False,
        extensions: ExtensionOptions | None = None,
    ) -> None:
        super().__init__()
        # Only for a process that runs one app (`ink`): frozen objects are never freed.
        self._freeze_startup_heap = freeze_startup_heap
        self.plan = plan or SessionPlan("off")
        self.config_notices = list(notices)
        self.session_root = session_root
        self.config = config
        self.sessions: AppSessions | None = None
        self.commands = CommandRunner(self)
        self.binding: SessionBinding | None = None
        install_alt_enter()
        self.bus = EventBus()
        self._make_controller = make_controller
        self.controller: RunController | None = None
        self.model_label = model_label
        self.is_demo = is_demo
        self.workspace = workspace
        # Lines submitted before the controller exists (typed during the first frame).
        self._early: list[tuple[str, QueueMode]] = []
        self._last_idle_ctrl_c: float | None = None
        self._last_abort_ctrl_c: float | None = None
        # Extensions: None loads none (tests, --no-extensions); loaded with the controller.
        self.extension_options = extensions
        self.extension_host: ExtensionHost | None = None
        # The extensions' slash commands, for completion, the palette and parsing.
        self.extra_commands: list[SlashCommand] = []

    def compose(self) -> ComposeResult:
        yield Transcript(self.bus)
        yield ActivityPanel(self.bus)
        yield ApprovalQuestion(self.bus)
        yield QueueList(self.bus)
        prompt = PromptInput(id="prompt")
        yield CompletionMenu(prompt, FileIndex(self.workspace))
        yield prompt
        yield HintRow(self.bus)
        yield StatusBar(
            self.bus, model_label=self.model_label, is_demo=self.is_demo, workspace=self.workspace
        )
        yield TooSmall()

    def on_mount(self) -> None:
        self._unsubscribe = self.bus.subscribe(self._on_event)
        self._apply_preferences()
        self._set_placeholder("idle")
        self.prompt.focus()
        self._check_size(self.size)
        self.call_after_refresh(self._preload_controller)

    def _preload_controller(self) -> None:
        self.run_worker(self._import_then_start, thread=True, group="start", exit_on_error=False)

    def _import_then_start(self) -> None:
        """On a thread: import what the controller needs, then build it on the loop."""
        from ink_tui.ui.preload import import_controller_modules

        history: tuple[list[str], str | None] = ([], None)
        session: LoadedSession | Exception | None = None
        try:
            import_controller_modules()
            history = self._read_input_history()
            session = self._read_planned_session()
        finally:
            # Even if an import failed: building the controller reports it properly.
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self._start_controller, *history, session)

    def _read_planned_session(self) -> LoadedSession | Exception | None:
        """The session `ink -c`/`-r` resumes (a big one takes a while to parse)."""
        if self.plan.mode != "resume" or self.plan.path is None:
            return None
        return read_session(self.plan.path)

    def _read_input_history(self) -> tuple[list[str], str | None]:
        """The saved input history, and why it could not be read (if so)."""
        if self.plan.mode == "off":
            return [], None
        from ink_tui.session.input_history_store import InputHistoryStore

        store = InputHistoryStore(self.workspace, root=self.session_root)
        return store.load(), store.warning

    def _apply_preferences(self) -> None:
        """Theme and key bindings from the config; a bad value is a notice, not a crash."""
        if self.config is None:
            return
        self.set_keymap(self.config.key_bindings)
        theme = self.config.theme
        if theme and theme in self.available_themes:
            self.theme = theme
        elif theme and theme != self.theme:
            known = ", ".join(sorted(self.available_themes))
            self.config_notices.append(f"Unknown theme {theme!r}; known themes: {known}.")

    def on_resize(self, event: events.Resize) -> None:
        # The event's size: this handler runs before App's own, which stores the new
        # size, so `self.size` here is still the size before the resize.
        self._check_size(event.size)

    def _check_size(self, size: Size) -> None:
        width, height = size
        small = too_small(width, height)
        # The main screen, even while a picker or help is open over it: the notice is
        # there (`self.query_one` would search the open picker and not find it).
        main = self.screen_stack[0]
        main.set_class(small, "-too-small")
        if small:
            main.query_one(TooSmall).show_size(width, height)

    def _set_placeholder(self, state: str) -> None:
        if state == "running":
            text = "Type to steer (Enter) or queue a follow-up (Alt+Enter)"
        elif self.is_demo:
            text = (
                "Ask the demo model anything (offline; set --base-url/--api-key for a real model)"
            )
        else:
            text = "Ask anything · Enter to send"
        self.prompt.placeholder = text

    def _start_controller(
        self,
        input_history: Sequence[str] = (),
        history_warning: str | None = None,
        session: LoadedSession | Exception | None = None,
    ) -> None:
        """Build the controller and the session; the files were read on a thread."""
        self.controller = self._make_controller(self.bus)
        self.controller.spawn = lambda coro: self.run_worker(coro, group="run", exit_on_error=False)
        transcript = self.query_one(Transcript)
        if self.plan.mode != "off":
            from ink_tui.ui.session_binding import SessionBinding

            self.binding = SessionBinding(self.bus, self.workspace, root=self.session_root)
            for text in input_history:
                self.prompt.input_history.add(text)
        self.sessions = AppSessions(self.binding, self.controller, transcript, self.prompt)
        self.sessions.start(self.plan, session)
        for notice in self.config_notices:
            transcript.add_notice(notice, "warning")
        if history_warning:
            transcript.add_notice(history_warning[:1].upper() + history_warning[1:], "warning")
        if self.plan.mode == "pick":
            self.call_after_refresh(self.pick_session)
        self._start_extensions()
        for text, mode in self._early:
            self.controller.submit(text, mode)
        self._early.clear()
        self.run_worker(self._prepare_heap, thread=True, group="heap", exit_on_error=False)

    # -- extensions -----------------------------------------------------------------

    def _start_extensions(self) -> None:
        """Load the user's extensions and a trusted project's; ask about an untrusted one."""
        options = self.extension_options
        if options is None or not options.enabled or self.controller is None:
            return
        from ink_tui.extensions.startup import start_extensions
        from ink_tui.ui.slash_commands import COMMANDS

        started = start_extensions(
            self.controller, options, reserved_commands=[c.name for c in COMMANDS]
        )
        self.extension_host = started.host
        self._refresh_extra_commands()
        if started.pending and started.pending_dir is not None:
            from ink_tui.session.config_files import display_path
            from ink_tui.ui.screens.trust_extensions import TrustExtensions

            self.push_screen(
                TrustExtensions(display_path(started.pending_dir), started.pending),
                partial(self._trust_answered, started),
            )

    def _trust_answered(self, started: Started, allow: bool | None) -> None:
        from ink_tui.extensions.startup import allow_project, pending_names

        transcript = self.query_one(Transcript)
        names = pending_names(started)
        if not allow or self.extension_options is None:
            transcript.add_notice(
                f"This folder's extensions were not loaded ({names}); ink asks again next time.",
                "warning",
            )
            return
        warning = allow_project(started, self.extension_options)
        if warning:
            transcript.add_notice(warning, "warning")
        self._refresh_extra_commands()
        transcript.add_notice(f"Allowed this folder's extensions ({names}).")

    def _refresh_extra_commands(self) -> None:
        host = self.extension_host
        commands = host.commands.values() if host is not None else ()
        self.extra_commands = [
            SlashCommand(
                c.name,
                c.description or f"from extension {c.extension}",
                f"/{c.name} [argument]",
                True,
                extension=c.extension,
            )
            for c in commands
        ]

    def _prepare_heap(self) -> None:
        """On a thread: load and warm the answer renderer, then (for `ink`) freeze."""
        from ink_tui.ui.heap import freeze_startup_heap, warm_up_renderer

        warm_up_renderer(self.current_theme.dark)
        if self._freeze_startup_heap:
            freeze_startup_heap()

    async def on_unmount(self) -> None:
        # Settling runs publish after the widgets are gone; the app no longer listens.
        self._unsubscribe()
        if self.extension_host is not None:
            self.extension_host.close()
        if self.controller is not None:
            await self.controller.aclose()
        if self.binding is not None:
            await self.binding.aclose()

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    # -- bus events that concern the whole app --------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, InputRestored):
            self.prompt.restore(event.text)
            self.prompt.focus()
        elif isinstance(event, StateChange):
            if event.state == "exited":
                self.exit(return_code=event.exit_code or 0)
            else:
                self._set_placeholder(event.state)

    # -- input ----------------------------------------------------------------------

    @on(PromptInput.Changed)
    def _draft_changed(self, message: PromptInput.Changed) -> None:
        if self.binding is not None:
            self.binding.set_draft(self.prompt.text)

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        self._last_idle_ctrl_c = None
        if self.binding is not None:
            self.binding.remember_input(message.text)
        invocation = parse_slash(message.text, self.extra_commands)
        if invocation is not None:
            if invocation.command is None:
                self.query_one(Transcript).add_notice(
                    unknown_message(invocation.name, self.extra_commands), "warning"
                )
                # Give the text back so a typo costs nothing.
                self.prompt.restore(message.text)
            else:
                self.commands.run(invocation.name, invocation.argument)
            return
        text = literal_text(message.text)
        if self.controller is None:
            self._early.append((text, message.mode))
        else:
            self.controller.submit(text, message.mode)

    @on(RunSlashCommand)
    def _run_command(self, message: RunSlashCommand) -> None:
        self.commands.run(message.name, message.argument)

    def resume_session(self, path: Path) -> None:
        """Resume the session in `path` (/resume): read on a thread, then shown."""
        if self.sessions is not None:
            self.run_worker(
                partial(self._read_then_open, path),
                thread=True,
                group="resume",
                exclusive=True,
                exit_on_error=False,
            )

    def _read_then_open(self, path: Path) -> None:
        read = read_session(path, self.binding.writer if self.binding is not None else None)
        if self.sessions is not None:
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self.sessions.open, path, read)

    def with_sessions(self, then: Callable[[list[SessionSummary]], None]) -> None:
        """Call `then` with this workspace's saved sessions, listed on a thread.

        Listing reads every session file of the workspace (for its message count):
        many long sessions are far too much to read on the UI's event loop.
        """

        def listing() -> None:
            from ink_tui.session.catalog import list_sessions

            binding = self.binding
            try:
                if binding is not None and binding.writer is not None:
                    # The current session's last entries may still wait on its writer.
                    binding.writer.drain()
            except OSError as error:
                # A write that failed is reported once: here, so it must be shown.
                with contextlib.suppress(RuntimeError):
                    self.call_from_thread(self._session_file_failed, error)
            sessions = list_sessions(self.workspace, self.session_root)
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(then, sessions)

        self.run_worker(listing, thread=True, group="sessions", exit_on_error=False)

    def _session_file_failed(self, error: OSError) -> None:
        self.query_one(Transcript).add_notice(f"Session file: {error}", "error")

    def pick_session(self) -> None:
        self.with_sessions(self._show_session_picker)

    def _show_session_picker(self, sessions: list[SessionSummary]) -> None:
        from ink_tui.ui.screens.session_picker import SessionPicker

        current = self.binding.writer.id if self.binding and self.binding.writer else None
        sessions = [s for s in sessions if s.id != current]
        if not sessions:
            self.query_one(Transcript).add_notice("There is no other session to resume.")
            return
        by_id = {s.id: s for s in sessions}

        def chosen(session_id: str | None) -> None:
            if session_id:
                self.resume_session(by_id[session_id].path)

        self.push_screen(SessionPicker(sessions), chosen)

    @on(PromptInput.EmptySubmit)
    def _empty_submit(self) -> None:
        if self.controller is not None and self.controller.queue_paused:
            self.controller.resume_queue()

    @on(PromptInput.QuitRequested)
    def _quit_requested(self) -> None:
        self.quit_app(0)

    @on(PromptInput.PullQueue)
    def _pull_queue(self) -> None:
        if self.controller is not None and self.controller.pull_queue_to_editor() == 0:
            self.query_one(HintRow).flash("The queue is empty.")

    # -- approval questions ---------------------------------------------------------

    @on(ApprovalQuestion.Answered)
    def _approval_answered(self, message: ApprovalQuestion.Answered) -> None:
        if self.controller is not None:
            self.controller.answer_approval(message.request_id, message.decision, message.reason)

    def action_focus_next(self) -> None:
        # Tab in the input goes to an open approval question first.
        question = self.query_one(ApprovalQuestion)
        if question.is_open and self.prompt.has_focus:
            question.focus()
            return
        super().action_focus_next()

    # -- queue list -----------------------------------------------------------------

    @on(QueueList.EditEntry)
    def _edit_entry(self, message: QueueList.EditEntry) -> None:
        if self.controller is not None:
            self.controller.edit_entry(message.entry_id, message.text, message.mode)

    @on(QueueList.ToggleMode)
    def _toggle_mode(self, message: QueueList.ToggleMode) -> None:
        if self.controller is not None:
            self.controller.toggle_entry_mode(message.entry_id)

    @on(QueueList.RemoveEntry)
    def _remove_entry(self, message: QueueList.RemoveEntry) -> None:
        if self.controller is not None:
            self.controller.remove_entry(message.entry_id)

    @on(QueueList.MoveEntry)
    def _move_entry(self, message: QueueList.MoveEntry) -> None:
        if self.controller is not None:
            self.controller.move_entry(message.entry_id, message.offset)

    @on(QueueList.MoveEntryTo)
    def _move_entry_to(self, message: QueueList.MoveEntryTo) -> None:
        if self.controller is not None:
            self.controller.move_entry_to(message.entry_id, message.index)

    @on(QueueList.Leave)
    def _leave_queue(self) -> None:
        self.prompt.focus()

    # -- actions --------------------------------------------------------------------

    def action_interrupt(self) -> None:
        """Ctrl+C: interrupt a run; idle, clear the editor, or quit on a second press."""
        if isinstance(self.screen, ModalScreen):
            # A picker or help is open: Ctrl+C closes it, as Escape would.
            self.screen.dismiss(None)
            return
        outcome = self.controller.interrupt() if self.controller is not None else "idle"
        now = clock.now()
        if outcome == "aborting":
            self._last_abort_ctrl_c = now
            self.query_one(HintRow).flash("Interrupting… press Ctrl+C again to quit now", 3.0)
            return
        if outcome == "exit":
            return
        aborted_at, self._last_abort_ctrl_c = self._last_abort_ctrl_c, None
        if aborted_at is not None and now - aborted_at <= DOUBLE_PRESS_S:
            # Loaded already: a run was aborted a moment ago.
            from ink_tui.control.controller import EXIT_INTERRUPTED

            self.quit_app(EXIT_INTERRUPTED)
            return
        # Idle with text selected in the transcript: Ctrl+C copies, as users expect of a
        # selection. While a run goes on it always interrupts (above): the stop key is
        # never taken over.
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.query_one(HintRow).flash(f"Copied {len(selected)} characters", 2.0)
            return
        if self.prompt.clear_input():
            self._last_idle_ctrl_c = None
            return
        if self._last_idle_ctrl_c is not None and now - self._last_idle_ctrl_c <= QUIT_WINDOW_S:
            self.quit_app(0)
            return
        self._last_idle_ctrl_c = now
        self.query_one(HintRow).flash("Press Ctrl+C again to quit", QUIT_WINDOW_S)

    def action_escape(self) -> None:
        """Escape interrupts a running task; idle, it returns focus to the input."""
        if self.controller is not None and self.controller.state == "running":
            self.action_interrupt()
        else:
            self.prompt.focus()

    def action_toggle_thinking(self) -> None:
        self.query_one(Transcript).toggle_thinking()

    def action_toggle_folds(self) -> None:
        self.query_one(Transcript).toggle_all_folds()

    def action_focus_queue(self) -> None:
        queue = self.query_one(QueueList)
        if queue.display:
            queue.focus_list()
        else:
            self.query_one(HintRow).flash("The queue is empty.")

    def quit_app(self, code: int = 0) -> None:
        if self.controller is not None:
            self.controller.exit(code)  # publishes `exited`, which exits the app
        else:
            self.exit(return_code=code)


def run_app(
    config: Config,
    workspace: Path,
    plan: SessionPlan,
    *,
    extensions: ExtensionOptions | None = None,
) -> int:
    from ink_tui.assemble import assemble_controller

    settings = config.run_settings()
    model = config.model_config()

    def make_controller(bus: EventBus) -> RunController:
        return assemble_controller(
            model, workspace, settings=settings, bus=bus, user_config_dir=config.user_config_dir
        )

    app = InkApp(
        make_controller,
        model_label=model_label(model.base_url, model.model),
        is_demo=model.is_demo,
        workspace=workspace,
        plan=plan,
        notices=config.problems,
        config=config,
        freeze_startup_heap=True,
        extensions=extensions,
    )
    app.run()
    # The exit status is the app's return code (130 after a double Ctrl+C, 1 after a
    # crash); `run()` returns the return value, which ink does not set.
    return app.return_code or 0
