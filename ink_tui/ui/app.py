"""The full-screen app: composes the widgets and routes between them and the controller.

Behaviour lives elsewhere: run control in `RunController`, drawing in the widgets, which
subscribe to the bus themselves. This class only turns keys and widget messages into
controller calls, and bus events that concern the whole app (exit, restored input) into
app actions.

The controller is built after the first frame (`make_controller`), so that start-up
does not pay for importing the HTTP client, the tools or the session store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from ink_tui.control.bus import EventBus
from ink_tui.control.controller import RunController
from ink_tui.control.input_queue import QueueMode
from ink_tui.core.events import Event, InputRestored, StateChange
from ink_tui.ui import clock
from ink_tui.ui.keys import install_alt_enter
from ink_tui.ui.widgets.activity_panel import ActivityPanel
from ink_tui.ui.widgets.hint_row import HintRow
from ink_tui.ui.widgets.prompt_input import PromptInput
from ink_tui.ui.widgets.queue_list import QueueList
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.too_small import TooSmall, too_small
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from ink_tui.control.run_settings import RunSettings
    from ink_tui.session.model_config import ModelConfig

MakeController = Callable[[EventBus], RunController]

QUIT_WINDOW_S = 2.0


class InkApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "ink"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Interrupt", priority=True),
        Binding("escape", "escape", "Interrupt", show=False),
        Binding("ctrl+t", "toggle_thinking", "Thinking"),
        Binding("ctrl+o", "toggle_folds", "Folds"),
        Binding("ctrl+q", "focus_queue", "Queue"),
    ]

    def __init__(
        self,
        make_controller: MakeController,
        *,
        model_label: str,
        is_demo: bool,
        workspace: Path,
    ) -> None:
        super().__init__()
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

    def compose(self) -> ComposeResult:
        yield Transcript(self.bus)
        yield ActivityPanel(self.bus)
        yield QueueList(self.bus)
        yield PromptInput(id="prompt")
        yield HintRow(self.bus)
        yield StatusBar(
            self.bus, model_label=self.model_label, is_demo=self.is_demo, workspace=self.workspace
        )
        yield TooSmall()

    def on_mount(self) -> None:
        self._unsubscribe = self.bus.subscribe(self._on_event)
        self._set_placeholder("idle")
        self.prompt.focus()
        self._check_size()
        self.call_after_refresh(self._start_controller)

    def on_resize(self) -> None:
        self._check_size()

    def _check_size(self) -> None:
        width, height = self.size
        small = too_small(width, height)
        self.screen.set_class(small, "-too-small")
        if small:
            self.query_one(TooSmall).show_size(width, height)

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

    def _start_controller(self) -> None:
        self.controller = self._make_controller(self.bus)
        self.controller.spawn = lambda coro: self.run_worker(coro, group="run", exit_on_error=False)
        for text, mode in self._early:
            self.controller.submit(text, mode)
        self._early.clear()

    async def on_unmount(self) -> None:
        # Settling runs publish after the widgets are gone; the app no longer listens.
        self._unsubscribe()
        if self.controller is not None:
            await self.controller.aclose()

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

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        self._last_idle_ctrl_c = None
        if self.controller is None:
            self._early.append((message.text, message.mode))
        else:
            self.controller.submit(message.text, message.mode)

    @on(PromptInput.QuitRequested)
    def _quit_requested(self) -> None:
        self._quit(0)

    @on(PromptInput.PullQueue)
    def _pull_queue(self) -> None:
        if self.controller is not None and self.controller.pull_queue_to_editor() == 0:
            self.query_one(HintRow).flash("The queue is empty.")

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
        outcome = self.controller.interrupt() if self.controller is not None else "idle"
        if outcome == "aborting":
            self.query_one(HintRow).flash("Interrupting… press Ctrl+C again to quit now", 3.0)
            return
        if outcome == "exit":
            return
        if self.prompt.clear_input():
            self._last_idle_ctrl_c = None
            return
        now = clock.now()
        if self._last_idle_ctrl_c is not None and now - self._last_idle_ctrl_c <= QUIT_WINDOW_S:
            self._quit(0)
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

    def _quit(self, code: int) -> None:
        if self.controller is not None:
            self.controller.exit(code)  # publishes `exited`, which exits the app
        else:
            self.exit(return_code=code)


def model_label_for(base_url: str | None, model: str | None) -> str:
    if base_url is None:
        return "demo model (offline)"
    host = base_url.split("://", 1)[-1].split("/", 1)[0]
    return f"{model or 'default model'} @ {host}"


def run_app(config: ModelConfig, workspace: Path, settings: RunSettings) -> int:
    from ink_tui.assemble import assemble_controller

    def make_controller(bus: EventBus) -> RunController:
        return assemble_controller(config, workspace, settings=settings, bus=bus)

    app = InkApp(
        make_controller,
        model_label=model_label_for(config.base_url, config.model),
        is_demo=config.is_demo,
        workspace=workspace,
    )
    code = app.run()
    return code if code is not None else 0
