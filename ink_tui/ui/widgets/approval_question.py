"""The approval question: a call waits for the user's yes or no, above the queue and input.

It shows the call (the command, or the path and a diff preview for write/edit), why it
asks, and the choices. Keys, while the question has focus:

| key            | choice                                                          |
| -------------- | --------------------------------------------------------------- |
| y / 1          | allow once                                                      |
| s / 2          | allow for this session (this tool, or the command's prefix)     |
| a / 3          | always (saved as a rule in the workspace's .ink/config.toml)    |
| n / 4          | deny: a reason box opens; Enter sends (empty: no reason), Escape goes back |
| ←/→, Enter     | move among the choices, pick one                                |
| Tab, Escape    | back to the input (the question stays; Tab in the input comes back) |
| any other key  | goes to the input: typing a steer never answers the question    |

The question takes focus when it appears only if the input is empty, so letters typed
into a draft never answer it. Every choice can be clicked. Ctrl+C stays the App's: it
interrupts the run, which denies the question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Static

from ink_tui.control.bus import EventBus
from ink_tui.core.events import ApprovalRequest, ApprovalResolved, Event, RunEnd
from ink_tui.core.tool_summary import call_label
from ink_tui.ui.blocks.diff_lines import diff_lines

if TYPE_CHECKING:
    from ink_tui.ui.widgets.prompt_input import PromptInput

PREVIEW_LINES = 12

# (decision, keys, label); labels for "session" and "always" name the rule.
_KEYS = {"allow": ("y", "1"), "session": ("s", "2"), "always": ("a", "3"), "deny": ("n", "4")}


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
    ApprovalQuestion #approval-choices {
        height: 1;
        margin-top: 1;
    }
    ApprovalQuestion .choice {
        width: auto;
        margin-right: 2;
        color: $text-muted;
    }
    ApprovalQuestion .choice.-current {
        color: $text;
        background: $accent 40%;
        text-style: bold;
    }
    ApprovalQuestion:focus .choice.-current {
        background: $accent;
    }
    ApprovalQuestion #approval-reason {
        display: none;
        margin-top: 1;
    }
    ApprovalQuestion.-reason #approval-reason {
        display: block;
    }
    """

    @dataclass
    class Answered(Message):
        request_id: str
        decision: str
        reason: str | None = None

    BINDINGS: ClassVar = []

    def __init__(self, bus: EventBus) -> None:
        super().__init__(id="approval")
        self._bus = bus
        self.request: ApprovalRequest | None = None
        self.decisions: list[str] = []
        self.current = 0
        self._unsubscribe = lambda: None

    def compose(self) -> ComposeResult:
        yield Static("", id="approval-call", markup=False)
        yield Static("", id="approval-why", markup=False)
        yield Static("", id="approval-preview", markup=False)
        yield Horizontal(id="approval-choices")
        yield Input(
            placeholder="Why not? (for the model; Enter sends, empty for none)",
            id="approval-reason",
        )

    def on_mount(self) -> None:
        self._unsubscribe = self._bus.subscribe(self._on_event)

    def on_unmount(self) -> None:
        self._unsubscribe()

    @property
    def is_open(self) -> bool:
        return self.request is not None

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
        self.request = request
        self.decisions = (
            ["allow", "session", "always", "deny"] if request.rule else ["allow", "deny"]
        )
        self.current = 0
        self.remove_class("-reason")
        self.query_one("#approval-reason", Input).value = ""
        self.query_one("#approval-call", Static).update(_call_text(request))
        self.query_one("#approval-why", Static).update(f"Allow this? {request.why}.")
        preview = self.query_one("#approval-preview", Static)
        lines = _preview_lines(request)
        preview.display = bool(lines)
        preview.update(Text("\n").join(lines))
        choices = self.query_one("#approval-choices", Horizontal)
        choices.remove_children()
        choices.mount_all(_Choice(d, _label(d, request)) for d in self.decisions)
        self.call_after_refresh(self._paint_current)
        self.add_class("-open")
        prompt = self._prompt()
        if prompt is None or not prompt.text.strip():
            self.focus()

    def close(self) -> None:
        had_focus = self.has_focus_within
        self.request = None
        self.remove_class("-open", "-reason")
        if had_focus:
            self.to_input()

    def to_input(self, key: str | None = None) -> None:
        """Focus the input (and type `key` there) at once, not by a message: keys that
        arrive meanwhile must land in the input, in order."""
        prompt = self._prompt()
        if prompt is None:
            return
        prompt.focus()
        if key:
            prompt.insert(key)

    def _prompt(self) -> PromptInput | None:
        from ink_tui.ui.widgets.prompt_input import PromptInput

        try:
            return self.app.query_one(PromptInput)
        except Exception:
            return None

    # -- choosing -----------------------------------------------------------------------

    def choose(self, decision: str) -> None:
        if self.request is None or decision not in self.decisions:
            return
        if decision == "deny" and not self.has_class("-reason"):
            self.add_class("-reason")
            self.query_one("#approval-reason", Input).focus()
            return
        reason = self.query_one("#approval-reason", Input).value if decision == "deny" else None
        # Focus moves now: what the user types next belongs to the input.
        self.to_input()
        self.post_message(self.Answered(self.request.request_id, decision, reason))

    def _paint_current(self) -> None:
        for index, choice in enumerate(self.query(_Choice)):
            choice.set_class(index == self.current, "-current")

    @on(_Choice.Picked)
    def _picked(self, message: _Choice.Picked) -> None:
        self.current = self.decisions.index(message.decision)
        self._paint_current()
        self.choose(message.decision)

    @on(Input.Submitted, "#approval-reason")
    def _reason_sent(self, message: Input.Submitted) -> None:
        message.stop()
        self.choose("deny")

    def on_key(self, event: events.Key) -> None:
        if self.request is None:
            # Answered a moment ago and focus has not moved yet: the key is the input's.
            if event.is_printable and event.character:
                event.stop()
                event.prevent_default()
                self.to_input(event.character)
            return
        reason_box = self.query_one("#approval-reason", Input)
        if reason_box.has_focus:
            if event.key == "escape":
                event.stop()
                event.prevent_default()
                self.remove_class("-reason")
                self.focus()
            return
        key = event.key
        for decision, keys in _KEYS.items():
            if key in keys and decision in self.decisions:
                event.stop()
                event.prevent_default()
                self.current = self.decisions.index(decision)
                self._paint_current()
                self.choose(decision)
                return
        if key in ("left", "right", "up", "down"):
            step = -1 if key in ("left", "up") else 1
            self.current = (self.current + step) % len(self.decisions)
            self._paint_current()
        elif key == "enter":
            self.choose(self.decisions[self.current])
        elif key in ("escape", "tab", "shift+tab"):
            self.to_input()
        elif event.is_printable and event.character:
            # Typing goes on in the input: a steer typed now must not be lost or answer.
            self.to_input(event.character)
        else:
            return
        event.stop()
        event.prevent_default()


def _call_text(request: ApprovalRequest) -> Text:
    call = request.call
    text = Text("? ", style="bold")
    if call.name == "bash":
        text.append("bash ", style="bold")
        text.append(str(call.arguments.get("command", "")), style="")
    elif request.path is not None:
        text.append(f"{call.name} {request.path}")
    else:
        text.append(call_label(call, 200))
    return text


def _preview_lines(request: ApprovalRequest) -> list[Text]:
    if not request.preview:
        return [Text(request.preview_note, style="dim")] if request.preview_note else []
    lines = diff_lines(request.preview, file_header=False)
    if len(lines) > PREVIEW_LINES:
        hidden = len(lines) - PREVIEW_LINES
        lines = [*lines[:PREVIEW_LINES], Text(f"… {hidden} more lines", style="dim")]
    if request.preview_note:
        lines.insert(0, Text(request.preview_note, style="dim"))
    return lines


def _label(decision: str, request: ApprovalRequest) -> str:
    key = _KEYS[decision][0]
    if decision == "allow":
        return f"[{key}] allow once"
    if decision == "session":
        return f"[{key}] allow {request.rule_label} this session"
    if decision == "always":
        return f"[{key}] always allow {request.rule_label}"
    return f"[{key}] deny…"
