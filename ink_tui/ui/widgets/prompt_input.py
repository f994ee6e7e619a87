"""The input box: a multi-line editor whose Enter sends instead of breaking the line.

Keys (the App decides what a submission means: idle it starts a run, running it queues):

| key                  | effect                                                      |
| -------------------- | ----------------------------------------------------------- |
| Enter                | `Submitted(text, "steer")`, box cleared (blank: nothing)    |
| Alt+Enter            | `Submitted(text, "follow_up")`, box cleared                 |
| Shift+Enter, Ctrl+J  | new line (Shift+Enter only arrives with the kitty protocol) |
| Up on the first row  | older history entry (elsewhere: cursor up)                  |
| Down on the last row | newer history entry, then the draft (elsewhere: cursor down)|
| Ctrl+D               | empty box: `QuitRequested`; otherwise delete forward        |
| Alt+Up               | `PullQueue`: the App moves every queued entry into the box  |

Rows are visual rows: in a soft-wrapped line Up and Down first move through the line.
Ctrl+C is left to the App, which binds it with `priority=True` (TextArea's own Ctrl+C
copy binding then never sees it) and calls `clear_input()`, which keeps the cleared text
as the newest history entry: Up brings it back.

While a completion menu (`completion`, set by the menu itself) is open, Up, Down, Tab,
Enter and Escape go to it first: the table above applies only when it is closed.

Pointed at a sub-agent (`point_at`, by the app on a "steer" of its row), Enter and
Alt+Enter carry its id (`Submitted.agent_id`): the line steers that sub-agent, not the
main agent. The border and the placeholder say so; the text in the box is never touched
by pointing or un-pointing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from ink_tui.fastpaths import install_key_fixes
from ink_tui.ui.input_history import InputHistory
from ink_tui.ui.widgets.cursor_rest import CursorRest

if TYPE_CHECKING:
    # A name for two strings, for annotations only.
    from ink_tui.core.messages import QueueMode

MAX_VISIBLE_ROWS = 8

# Keys a completion menu may take while it is open; every other key edits as usual.
COMPLETION_KEYS = frozenset({"up", "down", "tab", "enter", "escape"})


class Completion(Protocol):
    """What the input box needs from a completion menu (`CompletionMenu` is one). A
    protocol, so this widget does not depend on the menu, which depends on it."""

    def take_key(self, key: str) -> bool:
        """Act on one of `COMPLETION_KEYS`; True when the menu was open and took it."""
        ...

    def sync(self) -> None:
        """The text or the cursor changed: open, filter or close."""
        ...

    def dismiss(self) -> None:
        """Close, and stay closed until the text is edited."""
        ...


def steering_text(description: str) -> str:
    """What the box and the hint row say while pointed at a sub-agent."""
    return f"Steering {description} · Enter sends to it · Esc back to the main agent"


def placeholder_for(state: str, is_demo: bool) -> str:
    """What the empty input says: how to steer while a run goes on, else how to start."""
    if state == "running":
        return "Type to steer (Enter) or queue a follow-up (Alt+Enter)"
    if is_demo:
        return "Ask the demo model anything (offline; set --base-url/--api-key for a real model)"
    return "Ask anything · Enter to send"


class PromptInput(TextArea):
    DEFAULT_CSS = f"""
    PromptInput {{
        height: auto;
        /* text rows plus the two rows of the tall border; beyond that it scrolls */
        max-height: {MAX_VISIBLE_ROWS + 2};
    }}
    /* Pointed at a sub-agent: a border of another colour, titled with its name. */
    PromptInput.-steering, PromptInput.-steering:focus {{
        border: tall $warning;
        border-title-color: $warning;
        border-title-style: bold;
    }}
    """

    # Bindings are used where they can work: they are only consulted for keys that the
    # TextArea lets bubble up, which excludes Enter (see `_on_key`).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("alt+enter", "submit('follow_up')", "Queue follow-up", show=False, id="follow_up"),
        Binding("shift+enter,ctrl+j", "newline", "New line", show=False, id="newline"),
        # Replaces TextArea's ctrl+d (delete right) only; its "delete" key stays.
        Binding("ctrl+d", "quit_or_delete", "Quit if empty", show=False),
        Binding("alt+up", "pull_queue", "Queued input to editor", show=False, id="pull_queue"),
    ]

    @dataclass
    class Submitted(Message):
        """The user sent the box's text: Enter (`steer`) or Alt+Enter (`follow_up`), to
        sub-agent `agent_id` when the box was pointed at one."""

        text: str
        mode: QueueMode = "steer"
        agent_id: str | None = None

    @dataclass
    class QuitRequested(Message):
        """Ctrl+D on an empty box."""

    @dataclass
    class EmptySubmit(Message):
        """Enter on an empty box (the App resumes a queue an interrupt left paused)."""

    class PullQueue(Message):
        """Alt+Up: the user wants every queued entry back in the editor (the run goes on)."""

    def __init__(
        self,
        *,
        input_history: InputHistory | None = None,
        placeholder: str = "",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder=placeholder,
            id=id,
            classes=classes,
        )
        self._input_history = input_history if input_history is not None else InputHistory()
        # The text last put in the box from the history; when the box no longer holds it
        # the user has edited it, and that edit must not be thrown away by walking on.
        self._recalled: str | None = None
        self.completion: Completion | None = None
        # The sub-agent the next line goes to (None: the main agent), and what the
        # empty box says when it goes to the main agent.
        self.target: str | None = None
        self._main_placeholder = placeholder

    @property
    def input_history(self) -> InputHistory:
        # Not `history`: TextArea already uses that name for its undo stack.
        return self._input_history

    def on_mount(self) -> None:
        # The widget that needs Alt+Enter makes sure the parser can produce it, so an app
        # composing it cannot forget; the install is idempotent.
        install_key_fixes()
        self._cursor_rest = CursorRest(self)

    def on_focus(self) -> None:
        self._cursor_rest.wake()

    def on_mouse_down(self) -> None:
        self._cursor_rest.wake()

    def on_paste(self) -> None:
        self._cursor_rest.wake()

    # -- what the App calls ---------------------------------------------------------

    def set_main_placeholder(self, text: str) -> None:
        """What the empty box says when lines go to the main agent (by run state)."""
        self._main_placeholder = text
        if self.target is None:
            self.placeholder = text

    def point_at(self, agent_id: str | None, description: str = "") -> None:
        """Send the next line to sub-agent `agent_id` (None: the main agent again)."""
        self.target = agent_id
        self.set_class(agent_id is not None, "-steering")
        if agent_id is None:
            self.border_title = None
            self.placeholder = self._main_placeholder
        else:
            self.border_title = f"Steering {description}"
            self.placeholder = steering_text(description)

    def mark_target_ended(self, description: str) -> None:
        """The sub-agent pointed at has ended: the title says so (Enter then gives the
        text back and points the box at the main agent, see the app)."""
        if self.target is not None:
            self.border_title = f"Steering {description} · it has ended"

    def restore(self, text: str) -> None:
        """Put `text` (restored queued input) above the draft, cursor at its end."""
        if not text:
            return
        self._end_walk()
        if self.text.strip():
            # Inserted, not reloaded: the draft stays byte for byte and Ctrl+Z undoes it.
            result = self.insert(text + "\n\n", (0, 0), maintain_selection_offset=False)
            # The insert ends at the start of the draft; the restored part ends at the
            # end of the line two above (positions come from the document, which splits
            # lines as it likes, e.g. on "\r\n" too).
            row = result.end_location[0] - 2
            self.move_cursor((row, len(self.document[row])))
        else:
            result = self.replace(text, (0, 0), self.document.end, maintain_selection_offset=False)
            self.move_cursor(result.end_location)
        # Put back by the app, not typed: no menu for a restored "/command".
        self._quiet_completion()

    def clear_input(self) -> bool:
        """Empty the box (Ctrl+C on an idle editor). Returns whether there was text.

        The text becomes the newest history entry, so Up on the empty box brings it
        back, even after more presses of Ctrl+C."""
        text = self.text
        had_text = bool(text)
        self._end_walk()
        if had_text:
            self._input_history.add(text)
            # An edit rather than load_text, so Ctrl+Z brings it back too.
            self.clear()
        return had_text

    # -- keys -----------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls `_on_key` of every class in the MRO, subclass first, until a
        # handler prevents the default. TextArea's turns Enter into a newline and stops
        # the event, so no binding ever sees Enter: it has to be taken here. Do not call
        # super(): TextArea's handler runs next anyway for every key we leave alone.
        # An open completion menu goes first; stopping the key here also keeps Escape
        # from reaching the App's binding (bindings are checked only once a key bubbles).
        self._cursor_rest.wake()
        completion = self.completion
        if (
            completion is not None
            and event.key in COMPLETION_KEYS
            and completion.take_key(event.key)
        ):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit("steer")

    def action_submit(self, mode: QueueMode = "steer") -> None:
        text = self.text
        if not text.strip():
            self.post_message(self.EmptySubmit())
            return
        self._input_history.add(text)
        self._recalled = None
        # load_text also drops the undo stack: the sent text lives on in the history.
        self.load_text("")
        self.post_message(self.Submitted(text, mode, self.target))

    # -- completion -------------------------------------------------------------------

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        # Our own message; not stopped, so it still bubbles to whoever else listens.
        if self.completion is not None:
            self.completion.sync()

    def _on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if self.completion is not None:
            self.completion.sync()

    def _on_blur(self, event: events.Blur) -> None:
        # Keys no longer come here, so a menu left open could not be used or closed.
        self._quiet_completion()

    def _quiet_completion(self) -> None:
        if self.completion is not None:
            self.completion.dismiss()

    def action_newline(self) -> None:
        if self.read_only:
            return
        start, end = self.selection
        result = self.replace("\n", start, end, maintain_selection_offset=False)
        self.move_cursor(result.end_location)

    def action_quit_or_delete(self) -> None:
        if self.text:
            self.action_delete_right()
        else:
            self.post_message(self.QuitRequested())

    def action_pull_queue(self) -> None:
        self.post_message(self.PullQueue())

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self._on_first_row() and self._walk_back():
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self._on_last_row() and self._walk_forward():
            return
        super().action_cursor_down(select)

    # -- history --------------------------------------------------------------------

    def _on_first_row(self) -> bool:
        return self.selection.is_empty and self.navigator.is_first_wrapped_line(
            self.cursor_location
        )

    def _on_last_row(self) -> bool:
        return self.selection.is_empty and self.navigator.is_last_wrapped_line(self.cursor_location)

    def _walk_back(self) -> bool:
        self._forget_walk_if_edited()
        entry = self._input_history.previous(self.text)
        if entry is None:
            return False
        self._show(entry)
        # Cursor on the first row, so another Up keeps walking back through entries
        # that span several lines (for one-line entries this is simply the end).
        self.move_cursor((0, len(self.document[0])))
        return True

    def _walk_forward(self) -> bool:
        self._forget_walk_if_edited()
        entry = self._input_history.next()
        if entry is None:
            return False
        self._show(entry)
        # Cursor on the last row, so another Down keeps walking forward.
        self.move_cursor(self.document.end)
        if not self._input_history.browsing:
            # `entry` is the user's own draft again, not a history entry.
            self._recalled = None
        return True

    def _show(self, text: str) -> None:
        self.load_text(text)
        # What the box holds now, as the document gives it back (its newline style).
        self._recalled = self.text
        # A recalled "/model" must not open the menu: it would take the next Up.
        self._quiet_completion()

    def _forget_walk_if_edited(self) -> None:
        # An edited entry becomes the new draft: walking then starts over from the
        # newest entry and hands the edit back at the bottom, instead of discarding it.
        if self._input_history.browsing and self.text != self._recalled:
            self._end_walk()

    def _end_walk(self) -> None:
        self._input_history.reset()
        self._recalled = None
