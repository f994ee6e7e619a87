"""The queue list: what the user typed while the agent was busy, editable in place.

It draws `QueueUpdate` events and never calls the controller: every change is a message
(`QueueList.EditEntry`, `ToggleMode`, `RemoveEntry`, `MoveEntry`, `MoveEntryTo`,
`Leave`) that the App routes. Rows are kept per entry id across updates, so an entry
being edited keeps its editor; if the loop takes that entry meanwhile, the row stays,
marked "sent", and saving re-queues the edit (the controller does that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from ink_tui.control.bus import EventBus
from ink_tui.core.events import Event, QueueEntryView, QueueUpdate
from ink_tui.core.messages import QueueMode
from ink_tui.ui.widgets.queue_row import QueueRow, RowAction, place_rows, row_at

# "key what" pairs: the App's Alt+Up pulls the queue back while the list is not focused.
UNFOCUSED_HINT = ("Alt+Up back to editor",)
FOCUSED_HINT = ("↑↓ select", "e edit", "m mode", "d delete", "Alt+↑↓ move", "Esc back")


class QueueList(Vertical, can_focus=True):
    DEFAULT_CSS = """
    QueueList {
        height: auto;
        border-top: hkey $panel;
        padding: 0 1;
    }
    QueueList.-empty {
        display: none;
    }
    QueueList > .header {
        height: 1;
        color: $text-muted;
    }
    QueueList > .rows {
        height: auto;
        max-height: 8;
    }
    QueueList:focus > .header {
        color: $text;
    }
    QueueList:blur QueueRow.-highlight {
        background: transparent;
    }
    /* A short terminal (ui/compact_layout.py): only the count, until the list is
       focused to edit it. */
    QueueList.-compact {
        border-top: none;
    }
    QueueList.-compact > .rows {
        display: none;
    }
    QueueList.-compact:focus-within > .rows {
        display: block;
    }
    """
    MAX_ROWS = 8

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Previous entry", show=False),
        Binding("down", "cursor(1)", "Next entry", show=False),
        Binding("e,enter", "edit", "Edit entry"),
        Binding("m", "row('toggle')", "Steer / follow-up"),
        Binding("d,delete", "row('delete')", "Delete entry"),
        Binding("alt+up", "row('up')", "Move entry up"),
        Binding("alt+down", "row('down')", "Move entry down"),
        Binding("escape", "leave", "Back to editor"),
    ]

    @dataclass
    class EditEntry(Message):
        entry_id: int
        text: str
        # The mode when editing began, for re-queueing if the entry was taken meanwhile.
        mode: QueueMode

    @dataclass
    class ToggleMode(Message):
        entry_id: int

    @dataclass
    class RemoveEntry(Message):
        entry_id: int

    @dataclass
    class MoveEntry(Message):
        entry_id: int
        offset: int

    @dataclass
    class MoveEntryTo(Message):
        entry_id: int
        index: int

    class Leave(Message):
        """The user is done with the list; the App should focus the input box."""

    def __init__(self, bus: EventBus, *, id: str | None = None, queue_key: str = "Ctrl+Q") -> None:
        """`queue_key`: how the key that focuses the list is shown ("Ctrl+Q")."""
        super().__init__(id=id, classes="-empty")
        self._bus = bus
        self.queue_key = queue_key
        self._unsubscribe = lambda: None
        # Display order: the live entries, then rows whose entry was sent mid-edit.
        self.rows: list[QueueRow] = []
        self.count = 0
        # Held after an interrupt (interrupt_queue = "keep") until the user resumes it.
        self.paused = False
        self.cursor_id: int | None = None
        self._drag: QueueRow | None = None

    def compose(self) -> ComposeResult:
        yield Static(classes="header")
        # The list itself holds focus and the highlight; the scroller only scrolls.
        yield VerticalScroll(classes="rows", can_focus=False)

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self._paint_header()

    def on_unmount(self) -> None:
        self._unsubscribe()

    def _on_event(self, event: Event) -> None:
        if isinstance(event, QueueUpdate) and event.agent_id is None:
            self.paused = event.paused
            self.show_entries(event.entries)

    # -- drawing ------------------------------------------------------------------

    def show_entries(self, entries: list[QueueEntryView]) -> None:
        """Draw the queue, reusing the row of every id that stays."""
        old_index = self._cursor_index()
        by_id = {row.entry.id: row for row in self.rows}
        live: list[QueueRow] = []
        for entry in entries:
            row = by_id.pop(entry.id, None) or QueueRow(entry)
            row.update_entry(entry)
            live.append(row)
        # What is left in by_id was taken by the loop (or removed). A row mid-edit stays,
        # marked "sent", so the edit is not lost; the others go.
        sent = [row for row in self.rows if row in by_id.values() and row.editing]
        for row in by_id.values():
            if row in sent:
                row.mark_sent()
            else:
                row.remove()
        self.count = len(entries)
        self.rows = [*live, *sent]
        place_rows(self.query_one(".rows", VerticalScroll), self.rows)
        if self.cursor_id not in {row.entry.id for row in self.rows} and self.rows:
            self.cursor_id = self.rows[min(max(old_index, 0), len(self.rows) - 1)].entry.id
        self._after_change()

    def _after_change(self) -> None:
        self.set_class(not self.rows, "-empty")
        for row in self.rows:
            row.set_class(row.entry.id == self.cursor_id, "-highlight")
        self._paint_header()
        if not self.rows and self.has_focus:
            # A hidden list cannot keep focus: hand it back to the input.
            self.post_message(self.Leave())

    @property
    def full_rows(self) -> int:
        """Rows the list takes in full: its border, the header and the rows."""
        if not self.rows:
            return 0
        rows = sum(6 if row.editing else 1 for row in self.rows)
        return 2 + min(self.MAX_ROWS, rows)

    def set_compact(self, compact: bool) -> None:
        if compact != self.has_class("-compact"):
            self.set_class(compact, "-compact")
            self._paint_header()

    def _paint_header(self, focused: bool | None = None) -> None:
        focused = self.has_focus if focused is None else focused
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.has_class("-compact") and not focused:
            text.append(f"{self.count} queued", style="bold")
            if self.paused:
                text.append(" (paused)", style="bold yellow")
            text.append("  ·  ", style="dim")
            text.append(self.queue_key, style="bold")
            text.append(" to edit", style="dim")
            self.query_one(".header", Static).update(text)
            return
        text.append(f"Queued · {self.count}", style="bold")
        if self.paused:
            text.append("  paused: Enter on an empty input runs it", style="bold yellow")
        text.append("  ·", style="dim")
        for pair in FOCUSED_HINT if focused else UNFOCUSED_HINT:
            key, what = pair.split(" ", 1)
            text.append("  ")
            text.append(key, style="bold")
            text.append(f" {what}", style="dim")
        self.query_one(".header", Static).update(text)

    # These run before Widget's own handlers set `has_focus`, hence the explicit flag.
    def on_focus(self) -> None:
        self._paint_header(focused=True)

    def on_blur(self) -> None:
        self._paint_header(focused=False)

    # -- keyboard -----------------------------------------------------------------

    def focus_list(self) -> bool:
        """Focus the list (the App binds a key to this); False when there is nothing."""
        if not self.rows:
            return False
        if self.cursor_id is None:
            self.cursor_id = self.rows[0].entry.id
        self._after_change()
        self.focus()
        return True

    def _cursor_index(self) -> int:
        ids = [row.entry.id for row in self.rows]
        return ids.index(self.cursor_id) if self.cursor_id in ids else -1

    def _current(self) -> QueueRow | None:
        index = self._cursor_index()
        return self.rows[index] if index >= 0 else None

    def action_cursor(self, step: int) -> None:
        if not self.rows:
            return
        index = max(0, min(self._cursor_index() + step, len(self.rows) - 1))
        self.cursor_id = self.rows[index].entry.id
        self._after_change()
        self.rows[index].scroll_visible()

    def action_edit(self) -> None:
        if (row := self._current()) is not None:
            row.begin_edit()

    def action_row(self, action: RowAction) -> None:
        if (row := self._current()) is not None:
            self._act(row, action)

    def action_leave(self) -> None:
        self.post_message(self.Leave())

    # -- what rows report ---------------------------------------------------------

    def _act(self, row: QueueRow, action: RowAction) -> None:
        entry = row.entry
        if action == "delete":
            # Close the editor first, or the update without this id would keep the
            # row as a "sent" edit.
            row.end_edit()
            if row.sent:
                self._drop_sent(row)
            else:
                self.post_message(self.RemoveEntry(entry.id))
        elif row.sent:
            return
        elif action == "toggle" and not entry.shell:
            self.post_message(self.ToggleMode(entry.id))
        elif action in ("up", "down"):
            self.post_message(self.MoveEntry(entry.id, -1 if action == "up" else 1))

    def on_queue_row_action(self, message: QueueRow.Action) -> None:
        message.stop()
        self.cursor_id = message.row.entry.id
        self._act(message.row, message.action)
        self._after_change()

    def on_queue_row_edit_done(self, message: QueueRow.EditDone) -> None:
        message.stop()
        row = message.row
        text = message.text
        had_focus = row.has_focus_within
        row.end_edit()
        if text is not None and text == row.entry.text:
            pass  # unchanged: nothing to update, and a sent entry went out as it is
        elif text is not None and text.strip():
            self.post_message(self.EditEntry(row.entry.id, text, row.edit_mode))
        elif text is not None and not row.sent:
            # Saving an empty text would queue an empty message: treat it as a delete.
            self.post_message(self.RemoveEntry(row.entry.id))
        if row.sent:
            self._drop_sent(row)
        if had_focus:
            # The editor held focus; with no row left, the App takes it back.
            if self.rows:
                self.focus()
            else:
                self.post_message(self.Leave())

    def _drop_sent(self, row: QueueRow) -> None:
        if row in self.rows:
            self.rows.remove(row)
        row.remove()
        self._after_change()

    # -- drag and drop ------------------------------------------------------------

    def on_mouse_down(self, event: events.MouseDown) -> None:
        row, handle = row_at(self.screen, event.screen_offset, self.rows)
        if row is None or event.button != 1:
            return
        self.cursor_id = row.entry.id
        self._after_change()
        if handle and not row.sent:
            self._drag = row

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._drag is None:
            return
        if event.button == 0:
            # The button went up where we could not see it (outside the list).
            self._end_drag()
            return
        target, _ = row_at(self.screen, event.screen_offset, self._live_rows())
        if target is not None and target is not self._drag and self.app.mouse_captured is None:
            # Capture only once the pointer reaches another row: a plain click must
            # still reach the badge or text it was made on.
            self.capture_mouse()
        self._set_drop_target(None if target is self._drag else target)

    def on_mouse_up(self, event: events.MouseUp) -> None:
        dragged = self._drag
        if dragged is None:
            return
        live = self._live_rows()
        target, _ = row_at(self.screen, event.screen_offset, live)
        self._end_drag()
        if target is None or target is dragged:
            return
        event.stop()
        self.post_message(self.MoveEntryTo(dragged.entry.id, live.index(target)))

    def _live_rows(self) -> list[QueueRow]:
        return [row for row in self.rows if not row.sent]

    def _set_drop_target(self, target: QueueRow | None) -> None:
        for row in self.rows:
            row.set_class(row is target, "-drop-target")

    def _end_drag(self) -> None:
        self._drag = None
        self._set_drop_target(None)
        self.release_mouse()
