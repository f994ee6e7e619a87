"""A modal list to pick one row from: sessions, models, modes.

Type to narrow the rows (every word must appear in the row, in any case), Up/Down (or
PageUp/PageDown) to move, Enter or a click to pick, Escape to cancel. The screen's result
is the picked row's key, or None when cancelled.

Focus stays in the filter box the whole time: the list itself is not focusable, so typed
characters always filter and the screen's bindings move the highlight.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, OptionList, Static

from ink_tui.ui.screens.modal_frame import CenteredModal, ModalFrame

PickerRow = tuple[str, str, str]
"""(key, label, detail): the key is what the picker returns; the label is shown on the
left, cut to fit, the detail dimmed on the right."""

LABEL_MIN_WIDTH = 24
PAGE = 8


def filter_rows(rows: list[PickerRow], query: str) -> list[PickerRow]:
    """The rows whose label or detail contains every word of `query`, case-insensitive."""
    words = query.lower().split()
    if not words:
        return list(rows)
    return [row for row in rows if all(word in f"{row[1]} {row[2]}".lower() for word in words)]


class PickerRows(OptionList, can_focus=False):
    """The picker's list; never focused, so typing always reaches the filter box."""

    DEFAULT_CSS = """
    PickerRows {
        height: auto;
        /* Half the terminal: with the frame's other rows it still fits at the app's
           minimum height, and a tall terminal shows more rows. */
        max-height: 50vh;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        border: none;
        padding: 0;
        background: transparent;
        & > .option-list--option-highlighted {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }
    }
    """


class ListPicker(CenteredModal[str | None]):
    DEFAULT_CSS = """
    ListPicker > #picker-frame {
        max-width: 110;
    }
    ListPicker #picker-filter {
        margin-bottom: 1;
    }
    ListPicker #picker-empty {
        color: $text-muted;
        display: none;
    }
    ListPicker #picker-empty.-shown {
        display: block;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", f"move(-{PAGE})", "Page up", show=False),
        Binding("pagedown", f"move({PAGE})", "Page down", show=False),
    ]

    def __init__(
        self,
        title: str,
        rows: list[PickerRow],
        selected_key: str | None = None,
        *,
        placeholder: str = "Type to filter",
    ) -> None:
        """`selected_key` is highlighted first (e.g. the model in use)."""
        super().__init__()
        self._title = title
        self._rows = list(rows)
        self._selected_key = selected_key
        self._placeholder = placeholder
        self._visible: list[PickerRow] = []

    def compose(self) -> ComposeResult:
        # Every row inside the frame is for the list: title and hints are in its border.
        with ModalFrame(self._title, "↑↓ move · Enter pick · Esc cancel", id="picker-frame"):
            yield Input(placeholder=self._placeholder, id="picker-filter")
            yield PickerRows(id="picker-rows", markup=False)
            yield Static("No matches.", id="picker-empty")

    def on_mount(self) -> None:
        self._show(filter_rows(self._rows, ""), keep=self._selected_key)
        self.query_one(Input).focus()

    @property
    def visible_rows(self) -> list[PickerRow]:
        """The rows the filter lets through, in order."""
        return list(self._visible)

    @property
    def highlighted_key(self) -> str | None:
        index = self._list.highlighted
        return None if index is None or not self._visible else self._visible[index][0]

    @property
    def _list(self) -> OptionList:
        return self.query_one(PickerRows)

    # -- events ---------------------------------------------------------------------

    @on(Input.Changed, "#picker-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._show(filter_rows(self._rows, event.value), keep=self.highlighted_key)

    @on(Input.Submitted, "#picker-filter")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        key = self.highlighted_key
        if key is not None:
            self.dismiss(key)

    @on(OptionList.OptionSelected, "#picker-rows")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self._visible[event.option_index][0])

    @on(OptionList.OptionHighlighted, "#picker-rows")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_move(self, delta: int) -> None:
        if not self._visible:
            return
        current = self._list.highlighted or 0
        self._list.highlighted = max(0, min(len(self._visible) - 1, current + delta))

    # -- drawing --------------------------------------------------------------------

    def _show(self, rows: list[PickerRow], keep: str | None) -> None:
        self._visible = rows
        option_list = self._list
        self.query_one("#picker-empty").set_class(not rows, "-shown")
        option_list.display = bool(rows)
        if not rows:
            option_list.clear_options()
            return
        option_list.set_options(_row(label, detail) for _, label, detail in rows)
        keys = [key for key, _, _ in rows]
        option_list.highlighted = keys.index(keep) if keep in keys else 0


def _row(label: str, detail: str) -> Table:
    # A grid, not one line of text: when the row is too wide the label gives way (with
    # an ellipsis) and the detail (message count, model, host) stays in view.
    row = Table.grid(padding=(0, 2), expand=True)
    row.add_column(ratio=1, min_width=LABEL_MIN_WIDTH, no_wrap=True, overflow="ellipsis")
    row.add_column(no_wrap=True, justify="right", style="dim")
    row.add_row(Text(label), Text(detail))
    return row
