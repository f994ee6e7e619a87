"""The approval question: a call waits for the user's yes or no, above the queue and input.

It shows the call (the command, or the path and a diff preview for write/edit), why it
asks, the choices, and on its last line the keys that work now.

Typed text is never an answer. When a question opens, the focus stays where it was
(the input): letters, Enter (steer), Alt+Enter (follow-up) and pastes go on to the input
and the queue, at any speed. Answering takes a deliberate act:

- a click on a choice (a click on "deny" opens the reason box);
- Ctrl+G (the App's `focus_approval` binding, which [keys] can rebind), a key that never
  types text and is never part of a paste, moves the focus to the question (and back).

Keys, only while the question itself has the focus (Ctrl+G):

| key            | choice                                                          |
| -------------- | --------------------------------------------------------------- |
| y / 1          | allow once                                                      |
| s / 2          | allow for this session (this tool, or the command's prefix)     |
| a / 3          | always (saved as a rule in the workspace's .ink/config.toml)    |
| n / 4          | deny: a reason box opens; Enter sends (empty: no reason), Escape goes back |
| ←/→, Enter     | move among the choices, pick one                                |
| Esc, Tab, Ctrl+G | back to the input, unanswered                                 |
| another letter | back to the input, and the letter lands there                   |
| a paste        | goes into the input                                             |

The question cannot be reached with Tab (a paste without bracketed paste can hold a
tab): it is focusable only after Ctrl+G, a click on "deny", until the focus leaves it.
Once answered, it takes no second answer: keys that were already on their way to it go
to the input, in order, and clicks do nothing until the next question. Ctrl+C stays
the App's: it interrupts the run, which denies the question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from ink_tui.control.bus import EventBus
from ink_tui.core.events import ApprovalRequest, ApprovalResolved, Event, RunEnd
from ink_tui.core.sentence import sentence
from ink_tui.ui.fit_text import elide
from ink_tui.ui.widgets.approval_text import DECISION_KEYS, call_text, choice_label, preview_lines

if TYPE_CHECKING:
    from ink_tui.ui.widgets.prompt_input import PromptInput

# tests/test_ui_folds.py reads the preview under its old name.
_preview_lines = preview_lines
# Keys that leave the question for the input without answering (Ctrl+G is the App's
# binding, so a rebound key works the same).
_LEAVE_KEYS = ("escape", "tab", "shift+tab")


class _Choice(Static):
    @dataclass
    class Picked(Message):
        decision: str

    def __init__(self, decision: str, label: str) -> None:
        super().__init__(label, markup=False, classes="choice")
        self.decision = decision

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Picked(self.decision))


class ApprovalQuestion(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ApprovalQuestion {
        height: auto;
        display: none;
        padding: 0 1;
        border-top: hkey $warning;
        background: $boost;
    }
    ApprovalQuestion.-open {
        display: block;
    }
    ApprovalQuestion #approval-call {
        text-style: bold;
    }
    ApprovalQuestion #approval-why {
        color: $text-muted;
    }
    ApprovalQuestion #approval-preview {
        max-height: 14;
        overflow-y: auto;
    }
    ApprovalQuestion #approval-preview.-empty {
        display: none;
    }
    ApprovalQuestion #approval-choices {
        height: 1;
        margin-top: 1;
    }
    ApprovalQuestion .choice {
        width: auto;
        margin-right: 2;
        color: $text-muted;
    }
    ApprovalQuestion.-answering .choice.-current {
        color: $text;
        background: $accent;
        text-style: bold;
    }
    ApprovalQuestion #approval-keys {
        height: 1;
        color: $warning;
    }
    ApprovalQuestion.-answering #approval-keys {
        color: $text-muted;
    }
    ApprovalQuestion #approval-reason {
        display: none;
        margin-top: 1;
    }
    ApprovalQuestion.-reason #approval-reason {
        display: block;
    }
    /* A short terminal (ui/compact_layout.py): the call on one line and the keys. */
    ApprovalQuestion.-compact #approval-why,
    ApprovalQuestion.-compact #approval-preview,
    ApprovalQuestion.-compact #approval-choices {
        display: none;
    }
    ApprovalQuestion.-compact #approval-call {
        height: 1;
    }
    """

    @dataclass
    class Answered(Message):
        request_id: str
        decision: str
        reason: str | None = None

    BINDINGS: ClassVar = []

    def __init__(self, bus: EventBus, *, answer_key: str = "Ctrl+G") -> None:
        """`answer_key`: how the key that brings the focus here is shown ("Ctrl+G")."""
        super().__init__(id="approval")
        self._bus = bus
        self.answer_key = answer_key
        self.request: ApprovalRequest | None = None
        self.decisions: list[str] = []
        self.current = 0
        # The user moved here on purpose (Ctrl+G, a click on "deny"): only then can the
        # question (or its reason box) have the focus.
        self._answering = False
        # An answer was sent for `request`: nothing here takes another one.
        self._answered = False
        self._unsubscribe = lambda: None

    def compose(self) -> ComposeResult:
        yield Static("", id="approval-call", markup=False)
        yield Static("", id="approval-why", markup=False)
        yield Static("", id="approval-preview", markup=False)
        yield Horizontal(id="approval-choices")
        yield Static("", id="approval-keys", markup=False)
        yield Input(
            placeholder="Why not? (for the model; Enter sends, empty for none)",
            id="approval-reason",
        )

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)
        self.watch(self.screen, "focused", self._focus_moved, init=False)

    def on_unmount(self) -> None:
        self._unsubscribe()

    @property
    def is_open(self) -> bool:
        return self.request is not None

    @property
    def accepting(self) -> bool:
        """Open and not answered yet: an answer from here would count."""
        return self.request is not None and not self._answered

    @property
    def answering(self) -> bool:
        """The focus is on the question or its reason box (the user moved it here)."""
        return self._answering

    def allow_focus(self) -> bool:
        # Not in the Tab order and never focused by accident: only `summon`, a click on
        # "deny", while it takes an answer.
        return self._answering and self.accepting

    def allow_focus_children(self) -> bool:
        return self._answering and self.accepting

    @property
    def full_rows(self) -> int:
        """Rows the question takes in full: its border, the call, why, the preview, the
        choices (and their margin), the keys, and the reason box when open."""
        if self.request is None:
            return 0
        width = max(1, self.app.size.width - 2)
        call = -(-call_text(self.request).cell_len // width)
        why = -(-len(self.request.why) // width)
        preview = len(preview_lines(self.request))
        reason = 2 if self.has_class("-reason") else 0
        return 1 + max(1, call) + max(1, why) + min(preview, 14) + 2 + 1 + reason

    def set_compact(self, compact: bool) -> None:
        if compact != self.has_class("-compact"):
            self.set_class(compact, "-compact")
            if self.request is not None:
                self.query_one("#approval-call", Static).update(self._call_line())
                self._paint()

    def _call_line(self) -> Text:
        assert self.request is not None
        text = call_text(self.request)
        if self.has_class("-compact"):
            # One line: the command's end gives way to an ellipsis.
            text = elide(Text(" ").join(text.split("\n")), self._line_width())
        return text

    def on_resize(self) -> None:
        # The elided lines were cut for the old width.
        if self.request is not None and self.has_class("-compact"):
            self.query_one("#approval-call", Static).update(self._call_line())
        self._paint()

    def _line_width(self) -> int:
        return self.content_size.width or max(1, self.app.size.width - 2)

    # -- events -------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, ApprovalRequest):
            self.show(event)
        elif isinstance(event, ApprovalResolved):
            if self.request is not None and event.request_id == self.request.request_id:
                self.close()
        elif isinstance(event, RunEnd) and self.request is not None:
            self.close()

    def show(self, request: ApprovalRequest) -> None:
        """Show a question; the focus stays where it is (see the module's docstring)."""
        self.request = request
        self._answered = False
        self._answering = False
        self.decisions = (
            ["allow", "session", "always", "deny"] if request.rule else ["allow", "deny"]
        )
        self.current = 0
        self.remove_class("-reason", "-answering")
        self.query_one("#approval-reason", Input).value = ""
        self.query_one("#approval-call", Static).update(self._call_line())
        asker = (
            f"The sub-agent for “{request.agent_description}” asks. "
            if request.agent_id is not None and request.agent_description
            else ""
        )
        why = sentence(f"Allow this? {request.why}")
        self.query_one("#approval-why", Static).update(asker + why)
        preview = self.query_one("#approval-preview", Static)
        lines = preview_lines(request)
        # A class, not `display`: an inline style would beat the -compact rule, and a
        # small terminal kept the whole diff preview (the input pushed off the screen).
        preview.set_class(not lines, "-empty")
        preview.update(Text("\n").join(lines))
        choices = self.query_one("#approval-choices", Horizontal)
        choices.remove_children()
        choices.mount_all(_Choice(d, choice_label(d, request, keyed=False)) for d in self.decisions)
        self.add_class("-open")
        self.call_after_refresh(self._paint)

    def close(self) -> None:
        had_focus = self.has_focus_within
        self.request = None
        self._answering = False
        self.remove_class("-open", "-reason", "-answering")
        if had_focus:
            self.to_input()

    def summon(self) -> bool:
        """Move the focus to the question (Ctrl+G); False when there is none to answer."""
        if not self.accepting:
            return False
        self._answering = True
        self.remove_class("-reason")
        # At once, not by a message (`Widget.focus` waits for the App's queue): the
        # keys after Ctrl+G are meant for the question.
        self.screen.set_focus(self)
        self._paint()
        return True

    def leave(self) -> None:
        """Back to the input without answering (Esc, Tab, Ctrl+G again)."""
        self._answering = False
        self.remove_class("-reason")
        self.to_input()
        self._paint()

    def to_input(self, key: str | None = None) -> None:
        """Focus the input (and type `key` there) at once, not by a message: keys that
        arrive meanwhile must land in the input, in order."""
        prompt = self._prompt()
        if prompt is None:
            return
        self.screen.set_focus(prompt)
        if key:
            prompt.insert(key)

    def _prompt(self) -> PromptInput | None:
        from ink_tui.ui.widgets.prompt_input import PromptInput

        try:
            return self.app.query_one(PromptInput)
        except Exception:
            return None

    def _focus_moved(self, focused: Widget | None) -> None:
        inside = focused is not None and (focused is self or focused.id == "approval-reason")
        if not inside and self._answering:
            # Clicked or moved away: the next answer takes Ctrl+G (or a click) again.
            self._answering = False
            self.remove_class("-reason")
        self._paint()

    # -- choosing -----------------------------------------------------------------------

    def choose(self, decision: str) -> None:
        if not self.accepting or decision not in self.decisions:
            return
        assert self.request is not None
        if decision == "deny" and not self.has_class("-reason"):
            self._answering = True
            self.add_class("-reason")
            self.screen.set_focus(self.query_one("#approval-reason", Input))
            self._paint()
            return
        reason = self.query_one("#approval-reason", Input).value if decision == "deny" else None
        self._answered = True
        self._answering = False
        # Focus moves now: what the user types next belongs to the input.
        self.to_input()
        self._paint()
        self.post_message(self.Answered(self.request.request_id, decision, reason))

    def _paint(self) -> None:
        """The choices' labels and the keys line, for where the focus is now."""
        if self.request is None:
            return
        answering = self._answering and not self._answered
        self.set_class(answering, "-answering")
        request = self.request
        # A choice's margin is 2 columns; when the full labels would run past the row,
        # the short ones ("this session", "always"), so none is cut.
        full = sum(len(choice_label(d, request, keyed=answering)) + 2 for d in self.decisions)
        short = full > self._line_width()
        for index, choice in enumerate(self.query(_Choice)):
            choice.set_class(index == self.current, "-current")
            choice.update(choice_label(choice.decision, request, keyed=answering, short=short))
        keys = elide(Text(self._keys_text(answering)), self._line_width())
        self.query_one("#approval-keys", Static).update(keys)

    def _keys_text(self, answering: bool) -> str:
        if self._answered:
            return "Answered."
        if not answering:
            if self.has_class("-compact"):
                return f"{self.answer_key} to answer · what you type stays in the input"
            return (
                f"{self.answer_key} to answer · or click a choice · "
                "what you type stays in the input"
            )
        if self.has_class("-reason"):
            return "Enter sends the reason (empty: none) · Esc back to the choices"
        letters = "/".join(DECISION_KEYS[d][0] for d in self.decisions)
        return f"{letters} or ←/→ and Enter to answer · Esc back to the input"

    @on(_Choice.Picked)
    def _picked(self, message: _Choice.Picked) -> None:
        if not self.accepting:
            return
        self.current = self.decisions.index(message.decision)
        self.choose(message.decision)

    @on(Input.Submitted, "#approval-reason")
    def _reason_sent(self, message: Input.Submitted) -> None:
        message.stop()
        self.choose("deny")

    def on_paste(self, event: events.Paste) -> None:
        # A paste that reaches the question (not its reason box, which takes it itself)
        # is text for the input.
        event.stop()
        event.prevent_default()
        prompt = self._prompt()
        if prompt is None:
            return
        if self._answering:
            self.leave()
        prompt.insert(event.text)

    def on_key(self, event: events.Key) -> None:
        reason_box = self.query_one("#approval-reason", Input)
        # The screen's focus, not `has_focus`: that changes only when the Blur message is
        # handled, after the keys already on their way here.
        focused = self.screen.focused
        if not self.accepting or focused not in (self, reason_box):
            # Answered, or left a moment ago while keys were on their way here: they
            # belong to the input, in the order they were typed.
            if self._pass_to_input(event):
                event.stop()
                event.prevent_default()
            return
        if focused is reason_box:
            if event.key == "escape":
                self.remove_class("-reason")
                self.screen.set_focus(self)
                self._paint()
            elif event.is_printable and event.character:
                # Typed just after "n", before the box had the focus: it is the reason.
                reason_box.insert_text_at_cursor(event.character)
            else:
                return
            event.stop()
            event.prevent_default()
            return
        key = event.key
        for decision, keys in DECISION_KEYS.items():
            if key in keys and decision in self.decisions:
                event.stop()
                event.prevent_default()
                self.current = self.decisions.index(decision)
                self.choose(decision)
                return
        if key in ("left", "right", "up", "down"):
            step = -1 if key in ("left", "up") else 1
            self.current = (self.current + step) % len(self.decisions)
            self._paint()
        elif key == "enter":
            self.choose(self.decisions[self.current])
        elif key in _LEAVE_KEYS:
            self.leave()
        elif event.is_printable and event.character:
            # Not a choice: the user is typing. Back to the input, the letter with them.
            self.leave()
            self.to_input(event.character)
        else:
            return
        event.stop()
        event.prevent_default()

    def _pass_to_input(self, event: events.Key) -> bool:
        """Give a key that reached the question too late to the input; True if taken."""
        prompt = self._prompt()
        if prompt is None:
            return False
        if event.is_printable and event.character:
            prompt.insert(event.character)
        elif event.key == "enter":
            prompt.action_submit("steer")
        elif event.key == "backspace":
            prompt.action_delete_left()
        else:
            return False
        return True
