"""The full-screen app: composes the widgets and routes between them and the controller.

Behaviour lives elsewhere: run control in `RunController`, drawing in the widgets, which
subscribe to the bus themselves. This class only turns keys and widget messages into
controller calls, and bus events that concern the whole app (exit, restored input) into
app actions.

The controller is built after the first frame (`make_controller`, by `AppStart`), so
that start-up does not pay for importing the HTTP client, the tools or the session store.

The app's helpers, each in its own module, act on it through the `AppHost` protocol:
`CommandRunner` (slash commands), `AppStart` (after the first frame), `AppExtensions`
(loading, trust, their commands), `SessionActions` (listing, picking, resuming),
`CtrlCPolicy` (what Ctrl+C does when), `AgentControl` (stopping, steering a sub-agent).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ink_tui.control.bus import EventBus
from ink_tui.fastpaths import install_app_patches
from ink_tui.ui.app_start import AppStart, MakeController
from ink_tui.ui.main_screen import MainScreen
from ink_tui.ui.panel_layout import LAYOUT_EVENTS, PanelLayout

# The `ink` command's entry (cli.py imports it from here); built in a module of its own.
from ink_tui.ui.startup import AppSessions, SessionPlan
from ink_tui.ui.widgets.hint_row import HintRow, key_label
from ink_tui.ui.widgets.prompt_input import PromptInput, placeholder_for
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.too_small import TooSmall, check_size
from ink_tui.ui.widgets.transcript import Transcript
from ink_tui.ui.widgets.welcome import Welcome

if TYPE_CHECKING:
    # For annotations only: the controller module imports the agent loop, which the
    # first frame does not need (make_controller imports it after that frame).
    from textual.command import Provider

    from ink_tui.control.controller import RunController
    from ink_tui.core.events import Event, InputRestored, StateChange
    from ink_tui.extensions.host import ExtensionHost
    from ink_tui.extensions.startup import ExtensionOptions
    from ink_tui.session.config import Config
    from ink_tui.ui.agent_control import AgentControl
    from ink_tui.ui.agent_requests import SteerAgentRequested, StopAgentRequested
    from ink_tui.ui.app_extensions import AppExtensions
    from ink_tui.ui.command_runner import CommandRunner
    from ink_tui.ui.ctrl_c import CtrlCPolicy
    from ink_tui.ui.session_actions import SessionActions
    from ink_tui.ui.session_binding import SessionBinding
    from ink_tui.ui.slash_commands import RunSlashCommand, SlashCommand
    from ink_tui.ui.widgets.approval_question import ApprovalQuestion
    from ink_tui.ui.widgets.queue_list import QueueList


def _palette_commands() -> type[Provider]:
    """The palette's provider (ours, then Textual's own but its Quit: see below),
    imported when the palette first opens."""
    from ink_tui.ui.command_palette import PaletteCommands

    return PaletteCommands


class InkApp(App[None]):
    """The app returns no value: its exit status is `return_code`."""

    CSS_PATH = "app.tcss"
    TITLE = "ink"
    # Ours, and Textual's but its "Quit", which would leave without settling the run
    # (the palette's /quit goes through ink's own exit). One provider for both, so the
    # palette lists them in the same order on every start.
    COMMANDS: ClassVar = {_palette_commands}
    BINDINGS: ClassVar[list[BindingType]] = [
        # The ids are the action names of the config file's [keys] table (set_keymap).
        Binding("ctrl+c", "interrupt", "Interrupt", priority=True, id="interrupt"),
        Binding("escape", "escape", "Interrupt", show=False),
        Binding("ctrl+t", "toggle_thinking", "Thinking", id="toggle_thinking"),
        Binding("ctrl+o", "toggle_folds", "Folds", id="toggle_folds"),
        Binding("ctrl+q", "focus_queue", "Queue", id="focus_queue"),
        # Never a typed character, never in a paste: the deliberate way to an answer.
        Binding("ctrl+g", "focus_approval", "Answer", id="focus_approval"),
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
        extensions: ExtensionOptions | Callable[[], ExtensionOptions] | None = None,
    ) -> None:
        """`extensions` may be a factory, called after the first frame: the options'
        module imports the extension host, some 10 ms before anything is drawn."""
        super().__init__()
        self.plan = plan or SessionPlan("off")
        self.config_notices = list(notices)
        self.session_root = session_root
        self.config = config
        self.sessions: AppSessions | None = None
        self.binding: SessionBinding | None = None
        install_app_patches(InkApp)
        self.bus = EventBus()
        self.start = AppStart(self, make_controller, freeze_startup_heap)
        self.controller: RunController | None = None
        self.model_label = model_label
        self.is_demo = is_demo
        self.workspace = workspace
        self._extension_source = extensions
        # Which panels give way on a short terminal (ui/compact_layout.py).
        self.panel_layout = PanelLayout(self)

    # The app's helpers are made when first used, after the first frame: their modules
    # (slash commands, dialogs) are not needed to draw it.

    @cached_property
    def commands(self) -> CommandRunner:
        from ink_tui.ui.command_runner import CommandRunner

        return CommandRunner(self)

    @cached_property
    def ctrl_c(self) -> CtrlCPolicy:
        from ink_tui.ui.ctrl_c import CtrlCPolicy

        return CtrlCPolicy(self)

    @cached_property
    def agent_control(self) -> AgentControl:
        from ink_tui.ui.agent_control import AgentControl

        return AgentControl(self)

    @cached_property
    def session_actions(self) -> SessionActions:
        from ink_tui.ui.session_actions import SessionActions

        return SessionActions(self)

    @cached_property
    def extensions(self) -> AppExtensions:
        """Loaded with the controller."""
        from ink_tui.ui.app_extensions import AppExtensions

        source = self._extension_source
        return AppExtensions(self, source() if callable(source) else source)

    def get_default_screen(self) -> Screen[object]:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        # What the first frame shows (with a resumed session's end, `AppStart.preview`).
        # The widgets hidden until something happens (the completion menu, and the
        # activity panel, approval question and queue) are mounted after it
        # (`_mount_completion`, `mount_run_widgets`): nothing of them is on screen, and
        # their modules and styles cost the first frame some 20 ms.
        transcript = Transcript(self.bus)
        if self.plan.mode != "resume":
            # The first screen's welcome, until the first prompt (`end_welcome`).
            welcome = Welcome(
                model_label=self.model_label, is_demo=self.is_demo, workspace=self.workspace
            )
            self.panel_layout.welcome = welcome
            yield welcome
        yield transcript
        preview = self.start.preview(transcript)
        if preview is not None:
            yield preview
        yield PromptInput(id="prompt")
        yield HintRow(self.bus, answer_key=self.answer_key)
        yield StatusBar(
            self.bus,
            model_label=self.model_label,
            is_demo=self.is_demo,
            workspace=self.workspace,
            beat=transcript.beat,
        )
        yield TooSmall()

    def on_mount(self) -> None:
        self._unsubscribe = self.bus.subscribe(self._on_event)
        self._apply_preferences()
        self.prompt.set_main_placeholder(placeholder_for("idle", self.is_demo))
        self.prompt.focus()
        check_size(self.screen_stack[0], *self.size)
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        screens = self.screen_stack
        if not screens or not screens[0].is_attached:
            # Left already: a /quit or double Ctrl+C read with the first frame, before
            # this callback (on a busy machine). The screen is gone; mounting on it
            # would crash the exit (status 1).
            return
        # A resumed session's end is drawn first; the completion menu can wait for it.
        self.start.begin(then=self._mount_completion)

    def _mount_completion(self) -> None:
        """The completion menu, above the input (the first frame leaves it out)."""
        from ink_tui.ui.file_completion import FileIndex
        from ink_tui.ui.widgets.completion_menu import CompletionMenu

        prompt = self.prompt
        self.screen_stack[0].mount(CompletionMenu(prompt, FileIndex(self.workspace)), before=prompt)

    def mount_run_widgets(self) -> None:
        """The widgets that show only while the controller runs (activity, approval
        questions, the queue), in their places above the input; `AppStart` mounts them
        just before it builds the controller, and after a resumed session is built, so
        their imports and styles hold up neither that nor the keys typed meanwhile."""
        from ink_tui.ui.widgets.activity_panel import ActivityPanel
        from ink_tui.ui.widgets.approval_question import ApprovalQuestion
        from ink_tui.ui.widgets.queue_list import QueueList

        layout = self.panel_layout
        layout.activity = ActivityPanel(self.bus, self.query_one(Transcript).beat)
        layout.question = ApprovalQuestion(self.bus, answer_key=self.answer_key)
        layout.queue = QueueList(self.bus, queue_key=self.key_of("focus_queue", "ctrl+q"))
        self.screen_stack[0].mount(
            layout.activity, layout.question, layout.queue, before=self.query_one("CompletionMenu")
        )
        layout.schedule()

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
        check_size(self.screen_stack[0], *event.size)
        self.panel_layout.schedule()

    async def on_unmount(self) -> None:
        # Settling runs publish after the widgets are gone; the app no longer listens.
        self._unsubscribe()
        self.extensions.close()
        if self.controller is not None:
            await self.controller.aclose()
        if self.binding is not None:
            await self.binding.aclose()

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def answer_key(self) -> str:
        """The key that moves the focus to an approval question, as shown ("Ctrl+G")."""
        return self.key_of("focus_approval", "ctrl+g")

    def key_of(self, action: str, default: str) -> str:
        """The key bound to `action` (its [keys] name), as shown."""
        keys = self.config.key_bindings.get(action) if self.config else None
        return key_label(keys or default)

    # The extensions, as commands, completion and the palette read them.

    @property
    def extension_options(self) -> ExtensionOptions | None:
        return self.extensions.options

    @extension_options.setter
    def extension_options(self, options: ExtensionOptions | None) -> None:
        self.extensions.options = options

    @property
    def extension_host(self) -> ExtensionHost | None:
        return self.extensions.host

    @property
    def extra_commands(self) -> list[SlashCommand]:
        return self.extensions.commands

    # -- bus events that concern the whole app --------------------------------------

    def _on_event(self, event: Event) -> None:
        # By type name: the event classes are imported with the controller, after the
        # first frame, not with the app.
        if event.type in LAYOUT_EVENTS:
            self.panel_layout.schedule()
        if event.type == "input_restored":
            restored = cast("InputRestored", event)
            self.prompt.restore(restored.text)
            self.prompt.focus()
        elif event.type == "subagent_end" and event.agent_id is not None:
            self.agent_control.ended(event.agent_id)
        elif event.type == "state":
            change = cast("StateChange", event)
            if change.state == "exited":
                self.exit(return_code=change.exit_code or 0)
            else:
                self.prompt.set_main_placeholder(placeholder_for(change.state, self.is_demo))
                if change.state == "idle":
                    # After the hint row has seen the change (it ends a flash on it).
                    self.call_later(self.ctrl_c.settled)

    # -- input ----------------------------------------------------------------------

    @on(PromptInput.Changed)
    def _draft_changed(self, message: PromptInput.Changed) -> None:
        self.start.note_input()
        self.panel_layout.schedule()
        # From the message: it may arrive while the app shuts down, the box gone.
        text = message.text_area.text
        # Text back in the box ends "Cleared; press Up to bring it back" (a query, not
        # query_one: the row may be gone too).
        for hints in self.query(HintRow):
            hints.input_changed(text)
        if self.binding is not None:
            self.binding.set_draft(text)

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        self.ctrl_c.disarm()
        self.end_welcome()
        if self.binding is not None:
            self.binding.remember_input(message.text)
        from ink_tui.ui.slash_commands import literal_text, parse_slash, unknown_message

        invocation = parse_slash(message.text, self.extra_commands)
        if invocation is not None:
            if invocation.command is None:
                self.query_one(Transcript).add_notice(
                    unknown_message(invocation.name, self.extra_commands), "warning"
                )
                # Give the text back so a typo costs nothing.
                self.prompt.restore(message.text)
            elif invocation.name == "quit":
                self.commands.run(invocation.name, invocation.argument)
            else:
                # Typed before the controller exists (`/resume ID` during the first
                # frame), it waits for the controller and sessions, as a line does.
                name, argument = invocation.name, invocation.argument
                self.start.later(lambda: self.commands.run(name, argument))
            return
        if message.agent_id is not None:  # the input was pointed at a sub-agent
            self.agent_control.send(literal_text(message.text), message.mode, message.agent_id)
            return
        # Before the controller exists (typed during the first frame), the line waits.
        self.start.submit(literal_text(message.text), message.mode)

    @on(Transcript.Replaced)
    def _transcript_replaced(self) -> None:
        # A session picked at start (or by /resume) takes the welcome's place.
        self.end_welcome()

    def end_welcome(self) -> None:
        """The welcome gives way to the conversation (the first prompt, a resume)."""
        welcome = self.panel_layout.welcome
        if welcome is not None:
            self.panel_layout.welcome = None
            cast("Welcome", welcome).remove()

    # The hidden widgets' messages are handled by name (`on_<widget>_<message>`): their
    # classes are imported after the first frame, too late for `@on`.

    def on_run_slash_command(self, message: RunSlashCommand) -> None:
        self.commands.run(message.name, message.argument)

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

    # -- one sub-agent: its row's stop and steer ----------------------------------------

    def on_stop_agent_requested(self, message: StopAgentRequested) -> None:
        self.agent_control.stop(message.agent_id, message.description)

    def on_steer_agent_requested(self, message: SteerAgentRequested) -> None:
        self.agent_control.point(message.agent_id, message.description)

    # -- approval questions ---------------------------------------------------------

    def on_approval_question_answered(self, message: ApprovalQuestion.Answered) -> None:
        if self.controller is not None:
            self.controller.answer_approval(message.request_id, message.decision, message.reason)

    def action_focus_approval(self) -> None:
        """Ctrl+G: to the open approval question, or from it back to the input. Tab does
        not go there: a paste without bracketed paste can hold a tab."""
        from ink_tui.ui.widgets.approval_question import ApprovalQuestion

        # (Not mounted yet while a resumed session's end is being drawn.)
        for question in self.query(ApprovalQuestion):
            if question.answering:
                question.leave()
                return
            if question.summon():
                return
        self.query_one(HintRow).flash("No question to answer.")

    # -- queue list -----------------------------------------------------------------

    def on_queue_list_edit_entry(self, message: QueueList.EditEntry) -> None:
        if self.controller is not None:
            self.controller.edit_entry(message.entry_id, message.text, message.mode)

    def on_queue_list_toggle_mode(self, message: QueueList.ToggleMode) -> None:
        if self.controller is not None:
            self.controller.toggle_entry_mode(message.entry_id)

    def on_queue_list_remove_entry(self, message: QueueList.RemoveEntry) -> None:
        if self.controller is not None:
            self.controller.remove_entry(message.entry_id)

    def on_queue_list_move_entry(self, message: QueueList.MoveEntry) -> None:
        if self.controller is not None:
            self.controller.move_entry(message.entry_id, message.offset)

    def on_queue_list_move_entry_to(self, message: QueueList.MoveEntryTo) -> None:
        if self.controller is not None:
            self.controller.move_entry_to(message.entry_id, message.index)

    def on_queue_list_leave(self) -> None:
        self.prompt.focus()

    # -- actions --------------------------------------------------------------------

    def action_interrupt(self) -> None:
        """Ctrl+C: interrupt a run; idle, clear the editor, or quit on a second press."""
        self.ctrl_c.press()

    def action_escape(self) -> None:
        """Escape points the input back at the main agent if it steered a sub-agent;
        else it interrupts a running task; idle, it returns focus to the input, and
        twice on an empty input it opens the rewind picker (ui/rewind_actions.py)."""
        if self.agent_control.back_to_main():  # which also focuses the input
            return
        if self.controller is not None and self.controller.state == "running":
            self.action_interrupt()
        else:
            self.prompt.focus()
            self.commands.rewind.escape()

    def action_toggle_thinking(self) -> None:
        self.query_one(Transcript).toggle_thinking()

    def action_toggle_folds(self) -> None:
        self.query_one(Transcript).toggle_all_folds()

    def action_focus_queue(self) -> None:
        from ink_tui.ui.widgets.queue_list import QueueList

        # (Not mounted yet while a resumed session's end is being drawn.)
        for queue in self.query(QueueList):
            if queue.display:
                queue.focus_list()
                return
        self.query_one(HintRow).flash("The queue is empty.")

    def quit_app(self, code: int = 0) -> None:
        if self.controller is not None:
            self.controller.exit(code)  # publishes `exited`, which exits the app
        else:
            self.exit(return_code=code)
