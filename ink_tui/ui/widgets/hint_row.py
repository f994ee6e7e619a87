"""The line of key hints above the status bar; it changes with the run state, while
an approval question is open with where the focus is (the input, the question, its
reason box), and while the input is pointed at a sub-agent (`set_steering`).

A flash shows a message instead for a moment. One about the emptied input ("Cleared;
press Up to bring it back", `flash_until_typed`) ends as soon as the input holds text
again (`input_changed`): left for its whole moment, it told the user to bring back text
they had already brought back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from ink_tui.control.bus import EventBus
from ink_tui.ui.fit_text import Part, elide, fit_parts

if TYPE_CHECKING:
    from textual.widget import Widget

    from ink_tui.core.events import ApprovalRequest, ApprovalResolved, Event, StateChange

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

# While a question is open, by where the focus is (see approval_question.py).
REASON_HINTS = (
    ("Enter", "sends the reason"),
    ("Esc", "back to the choices"),
    ("Ctrl+C", "interrupts"),
)


def answering_hints(letters: str) -> tuple[tuple[str, str], ...]:
    """The question has the focus: its choice keys ("y/s/a/n", or "y/n")."""
    return (
        (letters, "or ←/→ Enter answer"),
        ("Esc", "back to the input"),
        ("Ctrl+C", "interrupts"),
    )


def asking_hints(answer_key: str) -> tuple[tuple[str, str], ...]:
    """The focus is not on the question: how to get there, and that typing still steers."""
    return (
        (answer_key, "answers the question"),
        ("Enter", "steers"),
        ("Alt+Enter", "queues a follow-up"),
        ("Ctrl+C", "interrupts"),
    )


def steering_hints(description: str, answer_key: str | None = None) -> tuple[tuple[str, str], ...]:
    """The input is pointed at a sub-agent: where Enter goes, and the way back."""
    hints = (
        (f"Steering {description}", ""),
        ("Enter", "sends to it"),
        ("Esc", "back to the main agent"),
        ("Alt+Enter", "queues it a follow-up"),
    )
    return hints if answer_key is None else (*hints, (answer_key, "answers the question"))


def key_label(keys: str) -> str:
    """A binding's first key as shown: "ctrl+g" -> "Ctrl+G", "alt+enter" -> "Alt+Enter"."""
    first = keys.split(",")[0].strip()
    return "+".join(part.upper() if len(part) == 1 else part.title() for part in first.split("+"))


def hint_parts(pairs: tuple[tuple[str, str], ...]) -> list[Part]:
    """Each hint a part; the first ones matter most and stay longest."""
    parts = []
    for index, (key, what) in enumerate(pairs):
        text = Text()
        text.append(key, style="bold")
        if what:
            text.append(f" {what}", style="dim")
        parts.append(Part(text, -index))
    return parts


def hint_text(pairs: tuple[tuple[str, str], ...], width: int = 10_000) -> Text:
    """The hints that fit `width`, the last ones dropped first, none cut mid-word."""
    return fit_parts(hint_parts(pairs), width)


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

    def __init__(self, bus: EventBus, *, answer_key: str = "Ctrl+G") -> None:
        super().__init__()
        self._bus = bus
        self._state = "idle"
        self._answer_key = answer_key
        # Open approval questions (request id -> its choice keys, "y/s/a/n" or "y/n"),
        # and where the focus is for them.
        self._asking: dict[str, str] = {}
        self._focus = ""
        # The sub-agent the input is pointed at (its description), if any.
        self._steering: str | None = None
        self._flash_timer: Timer | None = None
        # What the row shows: a flash, or the hints (fitted to the width when drawn).
        self._flash: str | None = None
        # The flash speaks of an empty input: text in it ends the flash.
        self._until_typed = False
        self._unsubscribe = lambda: None

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self.watch(self.screen, "focused", self._focus_moved, init=False)
        self._paint()

    def on_unmount(self) -> None:
        self._unsubscribe()

    def _focus_moved(self, focused: Widget | None) -> None:
        # By id: the question's module comes after the first frame.
        where = focused.id if focused is not None else None
        focus = where if where in ("approval", "approval-reason") else ""
        if focus != self._focus:
            self._focus = focus
            if self._asking:
                self._repaint()

    def _on_event(self, event: Event) -> None:
        # By type name: the event classes come with the controller, after the first frame.
        if event.type == "approval_request":
            request = cast("ApprovalRequest", event)
            # The same choices as the question's: once and deny, and the rule's two.
            self._asking[request.request_id] = "y/s/a/n" if request.rule else "y/n"
            self._repaint()
            return
        if event.type == "approval_resolved":
            self._asking.pop(cast("ApprovalResolved", event).request_id, None)
            self._repaint()
            return
        if event.type != "state":
            return
        change = cast("StateChange", event)
        if change.state != "running":
            self._asking.clear()
        if change.state != self._state:
            self._state = change.state
            # A flash belongs to the state it was shown in ("Interrupting…").
            if self._flash_timer is not None:
                self._flash_timer.stop()
                self._flash_timer = None
            self._paint()

    def set_steering(self, description: str | None) -> None:
        """The input is pointed at the sub-agent `description` (None: at the main agent)."""
        if description != self._steering:
            self._steering = description
            self._repaint()

    def flash(self, message: str, seconds: float = 2.0) -> None:
        """Show `message` instead of the hints for a moment (e.g. 'Ctrl+C again to quit')."""
        if self._flash_timer is not None:
            self._flash_timer.stop()
        self.add_class("-flash")
        self._flash = message
        # One row, always (see the CSS): no layout, only this row is drawn again.
        self.refresh()
        self._flash_timer = self.set_timer(seconds, self._end_flash)
        self._until_typed = False

    def flash_until_typed(self, message: str, seconds: float) -> None:
        """`flash`, ended early once the input holds text again (Up or Ctrl+Z brought it
        back, or something new was typed)."""
        self.flash(message, seconds)
        self._until_typed = True

    def input_changed(self, text: str) -> None:
        """The input's text changed (the app calls this on every change): `text` ends a
        `flash_until_typed`. An empty input keeps it: the clear itself reports a change."""
        if self._until_typed and text and self._flash_timer is not None:
            self._flash_timer.stop()
            self._end_flash()

    def _end_flash(self) -> None:
        self._flash_timer = None
        self._paint()

    def _repaint(self) -> None:
        # A flash stays for its moment; the hints under it are drawn when it ends.
        if self._flash_timer is None:
            self._paint()

    def hints(self) -> tuple[tuple[str, str], ...]:
        if self._asking:
            if self._focus == "approval":
                return answering_hints(next(iter(self._asking.values())))
            if self._focus == "approval-reason":
                return REASON_HINTS
            if self._steering is not None:
                return steering_hints(self._steering, self._answer_key)
            return asking_hints(self._answer_key)
        if self._steering is not None:
            return steering_hints(self._steering)
        return RUNNING_HINTS if self._state == "running" else IDLE_HINTS

    def _paint(self) -> None:
        self.remove_class("-flash")
        self._flash = None
        self._until_typed = False
        self.refresh()

    def render(self) -> Text:
        width = self.content_size.width or 10_000
        if self._flash is not None:
            return elide(Text(self._flash), width)
        return hint_text(self.hints(), width)
