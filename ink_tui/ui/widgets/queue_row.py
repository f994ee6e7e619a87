"""One queued entry: a mode badge, the text, ↑ ↓ ✕ controls, and an in-place editor.

A row never decides what a click means for the queue: it reports `QueueRow.Action` and
`QueueRow.EditDone` to the `QueueList`, which turns them into the messages the App
routes to the controller. The only thing a row does on its own is open its editor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.errors import NoWidget
from textual.geometry import Offset
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static, TextArea

from ink_tui.core.events import QueueEntryView

PartName = Literal["badge", "text", "up", "down", "delete"]
RowAction = Literal["toggle", "up", "down", "delete"]

BADGE_LABELS = {"steer": "steer", "follow_up": "follow-up", "shell": "shell"}
SENT_NOTE = "sent — Enter queues your edit as a new entry"
BADGE_WIDTH = 11


def entry_kind(entry: QueueEntryView) -> str:
    """The badge to show: a shell line's mode is irrelevant (the loop never takes it); an
    extension's entry shows whose it is (its mode goes before the text)."""
    if entry.source != "user":
        return "extension"
    return "shell" if entry.shell else entry.mode


def badge_label(entry: QueueEntryView) -> str:
    kind = entry_kind(entry)
    if kind != "extension":
        return BADGE_LABELS[kind]
    name = entry.source
    return name if len(name) <= BADGE_WIDTH - 2 else name[: BADGE_WIDTH - 3] + "…"


def mode_note(entry: QueueEntryView) -> str:
    """For an extension's entry, its mode (the badge holds its name)."""
    return f"{BADGE_LABELS[entry.mode]} · " if entry.source != "user" else ""


def summary(text: str, width: int, note: str = "") -> Text:
    """The first line, cut to `width` cells, then "(+N lines)" so the count is never cut;
    `note` (dim) goes first."""
    first, *rest = text.split("\n")
    suffix = ""
    if rest:
        suffix = f" (+{len(rest)} line{'s' if len(rest) > 1 else ''})"
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    line.append(note, style="dim")
    line.append(first)
    line.truncate(max(1, width - len(suffix)), overflow="ellipsis")
    line.append(suffix, style="dim")
    return line


class RowPart(Static):
    """A clickable piece of a row; a click becomes one `Pressed` message."""

    # Press-and-drag on a row reorders the queue, so it must not start a text selection.
    ALLOW_SELECT = False

    @dataclass
    class Pressed(Message):
        part: PartName

    def __init__(self, content: str, part: PartName, *, classes: str = "") -> None:
        super().__init__(content, markup=False, classes=classes)
        self.part: PartName = part

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Pressed(self.part))


class EntryText(RowPart):
    """The entry's text, drawn to the current width so "(+N lines)" always shows."""

    def __init__(self, text: str) -> None:
        super().__init__("", "text", classes="text")
        self.entry_text = text
        self.note = ""

    def set_text(self, text: str, note: str = "") -> None:
        self.entry_text = text
        self.note = note
        self.refresh()

    def render(self) -> Text:
        return summary(self.entry_text, self.content_region.width or 80, self.note)


class EntryEditor(TextArea):
    """Edits an entry in place: Enter saves, Escape cancels, Shift+Enter adds a line."""

    @dataclass
    class Save(Message):
        text: str

    class Cancel(Message):
        pass

    async def _on_key(self, event: events.Key) -> None:
        # TextArea inserts a newline on Enter and lets Escape reach the App (which would
        # interrupt the run); both must end the edit instead. prevent_default keeps
        # TextArea's own handler from also running.
        if event.key == "enter":
            self.post_message(self.Save(self.text))
        elif event.key == "escape":
            self.post_message(self.Cancel())
        elif event.key in ("shift+enter", "ctrl+j"):
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)
        else:
            return
        event.stop()
        event.prevent_default()


class QueueRow(Horizontal):
    DEFAULT_CSS = """
    QueueRow {
        height: auto;
        padding: 0 1 0 0;
    }
    QueueRow.-highlight {
        background: $boost;
    }
    QueueRow.-drop-target {
        background: $accent 30%;
    }
    QueueRow .badge {
        width: 11;
        margin-right: 1;
        text-align: center;
        text-style: bold;
    }
    QueueRow .badge.-steer {
        color: $text-warning;
        background: $warning-muted;
    }
    QueueRow .badge.-follow_up {
        color: $text-primary;
        background: $primary-muted;
    }
    QueueRow .badge.-shell {
        color: $text-success;
        background: $success-muted;
    }
    QueueRow .badge.-extension {
        color: $text-accent;
        background: $accent-muted;
        text-style: bold italic;
    }
    QueueRow .body {
        width: 1fr;
        height: auto;
    }
    QueueRow .text {
        width: 1fr;
        height: 1;
    }
    QueueRow .sent-note {
        display: none;
        color: $text-warning;
    }
    QueueRow.-sent .sent-note {
        display: block;
    }
    QueueRow.-sent .badge {
        text-style: strike;
    }
    QueueRow EntryEditor {
        height: auto;
        max-height: 6;
    }
    QueueRow .ctl {
        width: 3;
        text-align: center;
        color: $text-muted;
    }
    QueueRow .ctl:hover {
        color: $text;
        background: $boost;
    }
    """

    @dataclass
    class Action(Message):
        row: QueueRow
        action: RowAction

    @dataclass
    class EditDone(Message):
        row: QueueRow
        # None when the edit was cancelled.
        text: str | None

    def __init__(self, entry: QueueEntryView) -> None:
        super().__init__(id=f"queue-entry-{entry.id}")
        self.entry = entry
        self.editing = False
        # The mode when editing began: if the loop takes the entry meanwhile, the
        # controller re-queues the edit with this mode.
        self.edit_mode = entry.mode
        # The loop took the entry while it was being edited.
        self.sent = False

    def compose(self) -> ComposeResult:
        yield RowPart("", "badge", classes="badge")
        with Vertical(classes="body"):
            yield EntryText(self.entry.text)
            yield Static(SENT_NOTE, classes="sent-note", markup=False)
        yield RowPart("↑", "up", classes="ctl up")
        yield RowPart("↓", "down", classes="ctl down")
        yield RowPart("✕", "delete", classes="ctl delete")

    def on_mount(self) -> None:
        self._paint()

    def update_entry(self, entry: QueueEntryView) -> None:
        """Show a newer version of the entry; an open editor is left as it is."""
        self.entry = entry
        if self.is_mounted:
            self._paint()

    def mark_sent(self) -> None:
        self.sent = True
        self.add_class("-sent")

    def _paint(self) -> None:
        kind = entry_kind(self.entry)
        badge = self.query_one(".badge", RowPart)
        badge.update(badge_label(self.entry))
        badge.set_classes(f"badge -{kind}")
        if kind == "extension":
            badge.tooltip = f"from extension {self.entry.source!r} ({self.entry.custom_type})"
        self.query_one(EntryText).set_text(self.entry.text, mode_note(self.entry))

    def begin_edit(self) -> None:
        if self.editing:
            self.query_one(EntryEditor).focus()
            return
        self.editing = True
        self.edit_mode = self.entry.mode
        text_part = self.query_one(EntryText)
        text_part.display = False
        editor = EntryEditor(self.entry.text, compact=True, soft_wrap=True)
        self.query_one(".body", Vertical).mount(editor, after=text_part)
        editor.move_cursor(editor.document.end)
        editor.focus()

    def end_edit(self) -> None:
        """Close the editor without saving (the caller already reported the outcome)."""
        if not self.editing:
            return
        self.editing = False
        for editor in self.query(EntryEditor):
            editor.remove()
        self.query_one(EntryText).display = True

    def on_row_part_pressed(self, message: RowPart.Pressed) -> None:
        message.stop()
        if message.part == "text":
            self.begin_edit()
        elif message.part == "badge":
            self.post_message(self.Action(self, "toggle"))
        else:
            self.post_message(self.Action(self, message.part))

    def on_entry_editor_save(self, message: EntryEditor.Save) -> None:
        message.stop()
        self.post_message(self.EditDone(self, message.text))

    def on_entry_editor_cancel(self, message: EntryEditor.Cancel) -> None:
        message.stop()
        self.post_message(self.EditDone(self, None))


def place_rows(container: Widget, ordered: list[QueueRow]) -> None:
    """Make the container's rows follow `ordered`: new rows are mounted, kept rows are
    moved (never rebuilt, so an open editor survives an update)."""
    previous: QueueRow | None = None
    for row in ordered:
        children = list(container.children)
        if row.parent is None:
            if previous is not None:
                container.mount(row, after=previous)
            elif children:
                container.mount(row, before=0)
            else:
                container.mount(row)
        elif previous is None:
            if children[0] is not row:
                container.move_child(row, before=children[0])
        elif children.index(row) != children.index(previous) + 1:
            container.move_child(row, after=previous)
        previous = row


def row_at(
    screen: Screen[object], offset: Offset, rows: list[QueueRow]
) -> tuple[QueueRow | None, bool]:
    """The row of `rows` under a screen offset, and whether the point is a drag handle
    (badge or text; the ↑ ↓ ✕ controls and an open editor keep their own mouse handling)."""
    try:
        widget, _ = screen.get_widget_at(offset.x, offset.y)
    except NoWidget:
        return None, False
    handle = isinstance(widget, RowPart) and widget.part in ("badge", "text")
    for node in widget.ancestors_with_self:
        if isinstance(node, EntryEditor):
            handle = False
        if isinstance(node, QueueRow):
            return (node, handle) if node in rows else (None, False)
    return None, False
