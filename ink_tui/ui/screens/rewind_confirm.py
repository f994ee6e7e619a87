"""Asking before a rewind: the message, what a code restore would change, the choices.

The message's text (its first lines), then each file a code restore would change with
its lines added and removed and what happens to it ("removed": the run created it,
"recreated", "reverted"), then the choices Claude Code users know: 1 "Restore code and
conversation", 2 "Restore conversation", 3 "Restore code", and Cancel (Esc). Keys 1-3,
the arrows and Enter, or a click choose. When there is nothing to restore in the files
(no checkpoint after the message, or the files are as they were) only the conversation
is offered, and the box says why. The result is "both", "conversation", "files", or
None when cancelled.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ink_tui.checkpoints import FileChange
from ink_tui.session.rewind import RewindPreview
from ink_tui.ui.screens.modal_frame import CenteredModal, ModalFrame

CANCEL = "cancel"
BOTH = ("both", "Restore code and conversation")
CONVERSATION = ("conversation", "Restore conversation")
FILES = ("files", "Restore code")
NO_CHANGES = "No file changes to restore since this message."
SAME_FILES = "The files are as they were then: nothing to restore in them."
# The message's first lines shown; the rest is elided.
TEXT_LINES = 3
TEXT_CHARS = 300
# What a restore does to a file, by its status going from now to the checkpoint.
WHAT = {"deleted": "removed", "added": "recreated", "modified": "reverted"}


def message_excerpt(text: str) -> str:
    """The first `TEXT_LINES` lines (at most `TEXT_CHARS` characters), "…" if cut."""
    lines = text.strip().splitlines() or [""]
    excerpt = "\n".join(lines[:TEXT_LINES])
    cut = len(lines) > TEXT_LINES
    if len(excerpt) > TEXT_CHARS:
        excerpt, cut = excerpt[: TEXT_CHARS - 1].rstrip(), True
    return excerpt + "…" if cut else excerpt


def line_counts(change: FileChange) -> str:
    if change.added is None or change.removed is None:
        return "binary"
    return f"+{change.added} -{change.removed}"


def change_table(changes: list[FileChange]) -> Table:
    # A grid: a long path gives way (with an ellipsis) and the counts stay in view.
    table = Table.grid(padding=(0, 2), expand=True)
    table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    table.add_column(no_wrap=True, justify="right")
    table.add_column(no_wrap=True, style="dim")
    for change in changes:
        counts = Text(line_counts(change))
        counts.highlight_regex(r"\+\d+", "green")
        counts.highlight_regex(r"-\d+", "red")
        table.add_row(Text(change.path), counts, Text(WHAT.get(change.status, change.status)))
    return table


def choices_for(preview: RewindPreview) -> list[tuple[str, str]]:
    """(result, label) in order; the code is offered only when a restore changes it."""
    if preview.checkpoint is None or not preview.changes:
        return [CONVERSATION]
    return [BOTH, CONVERSATION, FILES]


def files_note(preview: RewindPreview) -> str:
    if preview.checkpoint is None:
        return NO_CHANGES
    if not preview.changes:
        return SAME_FILES
    count = len(preview.changes)
    files = "1 file" if count == 1 else f"{count} files"
    return f"Restoring the code changes {files}:"


class _Files(VerticalScroll, can_focus=False):
    """The files' list; it scrolls with the wheel, the keys stay with the choices."""


class RewindConfirm(CenteredModal[str | None]):
    DEFAULT_CSS = """
    RewindConfirm > #rewind-frame {
        max-width: 100;
    }
    RewindConfirm #rewind-text {
        color: $text;
        text-style: italic;
        margin-bottom: 1;
    }
    RewindConfirm #rewind-note {
        color: $text-muted;
    }
    RewindConfirm #rewind-files {
        height: auto;
        /* A long list scrolls; the choices below stay on screen at 60x20. */
        max-height: 30vh;
    }
    RewindConfirm #rewind-choices {
        height: auto;
        margin-top: 1;
        border: none;
        padding: 0;
        background: transparent;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose('cancel')", "Cancel", show=False),
        Binding("1", "number(0)", show=False),
        Binding("2", "number(1)", show=False),
        Binding("3", "number(2)", show=False),
    ]

    def __init__(self, preview: RewindPreview, *, note: str | None = None) -> None:
        """`note` replaces the files' line (e.g. why they cannot be restored)."""
        super().__init__()
        self._preview = preview
        self._choices = choices_for(preview)
        self._note = note

    @property
    def preview(self) -> RewindPreview:
        return self._preview

    @property
    def choices(self) -> list[str]:
        return [key for key, _ in self._choices]

    def compose(self) -> ComposeResult:
        hints = f"1-{len(self._choices)} or ↑↓ Enter choose · Esc cancel"
        if len(self._choices) == 1:
            hints = "1 or Enter choose · Esc cancel"
        with ModalFrame("Rewind to before this message?", hints, id="rewind-frame"):
            yield Static(message_excerpt(self._preview.text), id="rewind-text", markup=False)
            yield Static(self._note or files_note(self._preview), id="rewind-note", markup=False)
            if self._preview.changes and self._note is None:
                with _Files(id="rewind-files"):
                    yield Static(change_table(self._preview.changes))
            options = [
                Option(f"{number}. {label}", id=key)
                for number, (key, label) in enumerate(self._choices, start=1)
            ]
            options.append(Option("Cancel (Esc)", id=CANCEL))
            yield OptionList(*options, id="rewind-choices")

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = 0
        choices.focus()

    @on(OptionList.OptionSelected, "#rewind-choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(event.option.id or CANCEL)

    def action_number(self, index: int) -> None:
        if index < len(self._choices):
            self.action_choose(self._choices[index][0])

    def action_choose(self, key: str) -> None:
        self.dismiss(None if key == CANCEL else key)
