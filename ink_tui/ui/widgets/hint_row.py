"""The line of key hints above the status bar; it changes with the run state."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from ink_tui.control.bus import EventBus

if TYPE_CHECKING:
    from ink_tui.core.events import Event, StateChange

IDLE_HINTS = (
    ("Enter", "send"),
    ("Shift+Enter", "newline"),
    ("!cmd", "shell"),
    ("/", "commands"),
    ("@", "files"),
    ("Ctrl+O", "folds"),
    ("Ctrl+T", "thinking"),
)
RUNNING_HINTS = (
    ("Enter", "steers"),
    ("Alt+Enter", "queues a follow-up"),
    ("Ctrl+C", "interrupts"),
    ("Alt+Up", "queue to editor"),
)


def hint_text(pairs: tuple[tuple[str, str], ...]) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    for index, (key, what) in enumerate(pairs):
        if index:
            text.append("  ·  ", style="dim")
        text.append(key, style="bold")
        text.append(f" {what}", style="dim")
    return text


class HintRow(Static):
    DEFAULT_CSS = """
    HintRow {
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    HintRow.-flash {
        color: $warning;
        text-style: bold;
    }
    """

    def __init__(self, bus: EventBus) -> None:
        super().__init__()
        self._bus = bus
        self._state = "idle"
        self._flash_timer: Timer | None = None
        self._unsubscribe = lambda: None

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self._paint()

    def on_unmount(self) -> None:
        self._unsubscribe()

    def _on_event(self, event: Event) -> None:
        # By type name: the event classes come with the controller, after the first frame.
        if event.type != "state":
            return
        change = cast("StateChange", event)
        if change.state != self._state:
            self._state = change.state
            # A flash belongs to the state it was shown in ("Interrupting…").
            if self._flash_timer is not None:
                self._flash_timer.stop()
                self._flash_timer = None
            self._paint()

    def flash(self, message: str, seconds: float = 2.0) -> None:
        """Show `message` instead of the hints for a moment (e.g. 'Ctrl+C again to quit')."""
        if self._flash_timer is not None:
            self._flash_timer.stop()
        self.add_class("-flash")
        # One row, always (see the CSS): no layout, only this row is drawn again.
        self.update(Text(message, no_wrap=True, overflow="ellipsis"), layout=False)
        self._flash_timer = self.set_timer(seconds, self._end_flash)

    def _end_flash(self) -> None:
        self._flash_timer = None
        self._paint()

    def _paint(self) -> None:
        self.remove_class("-flash")
        self.update(
            hint_text(RUNNING_HINTS if self._state == "running" else IDLE_HINTS), layout=False
        )
