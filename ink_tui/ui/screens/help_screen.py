"""/help: the keys and the slash commands, in a scrollable modal. Escape closes it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Label, Static

from ink_tui.ui.screens.modal_frame import CenteredModal, ModalFrame
from ink_tui.ui.slash_commands import COMMANDS, SlashCommand

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send; while a run goes on, steer it"),
    ("Alt+Enter", "queue a follow-up for after the run"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Up, Down", "earlier inputs (on the first or last row)"),
    ("Alt+Up", "queued input back into the editor"),
    ("Ctrl+C", "interrupt the run; idle: copy the selection, else clear, twice to quit"),
    ("Escape", "interrupt the run; close a menu; twice on an empty input: rewind"),
    ("Ctrl+D", "quit, when the input is empty"),
    ("Ctrl+T", "show or hide thinking"),
    ("Ctrl+O", "fold or unfold tool output"),
    ("Ctrl+Q", "go to the queue"),
    ("Tab", "go to the transcript: Up/Down pick a tool call, Enter folds it"),
    ("Ctrl+P", "command palette"),
    ("/", "at the start: commands (Tab or Enter completes)"),
    ("@", "complete a workspace path"),
    ("Space /", "a leading space sends a literal /"),
)
"""The keys the App knows, as (key, what it does); what `HelpScreen` shows by default."""


def key_table(keys: Iterable[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, what in keys:
        # Text, not str: a str would be read as console markup, eating "[name]".
        table.add_row(Text(key), Text(what))
    return table


def command_table(commands: Iterable[SlashCommand]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for command in commands:
        table.add_row(Text(command.usage), Text(command.summary))
    return table


class HelpScreen(CenteredModal[None]):
    DEFAULT_CSS = """
    HelpScreen #help-body {
        height: auto;
        max-height: 100%;
    }
    HelpScreen .help-heading {
        text-style: bold;
        color: $accent;
    }
    HelpScreen #help-commands {
        padding-bottom: 1;
    }
    HelpScreen #help-keys {
        padding-bottom: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", show=False),
    ]

    def __init__(
        self,
        keys: Iterable[tuple[str, str]] = KEYS,
        commands: Iterable[SlashCommand] = COMMANDS,
    ) -> None:
        super().__init__()
        self._keys = list(keys)
        self._commands = list(commands)

    def compose(self) -> ComposeResult:
        with (
            ModalFrame("Help", "↑↓ scroll · Esc close", id="help-frame"),
            VerticalScroll(id="help-body"),
        ):
            yield Label("Keys", classes="help-heading")
            yield Static(key_table(self._keys), id="help-keys")
            yield Label("Commands", classes="help-heading")
            yield Static(command_table(self._commands), id="help-commands")

    def action_close(self) -> None:
        self.dismiss(None)
