"""The queue list, driven like the App will drive it: a real bus and a real InputQueue,
with the widget's messages routed to the queue the way the App routes them to the
controller. Every assertion reads the queue itself, not only the screen."""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input

from ink_tui.control.bus import EventBus
from ink_tui.control.input_queue import InputQueue, QueueEntry
from ink_tui.core.events import QueueEntryView, QueueUpdate
from ink_tui.ui.widgets.queue_list import QueueList
from ink_tui.ui.widgets.queue_row import EntryEditor, EntryText, QueueRow, summary


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.bus = EventBus()
        self.queue = InputQueue(self._publish)
        self.edits: list[QueueList.EditEntry] = []
        self.leaves = 0

    def _publish(self, entries: list[QueueEntry]) -> None:
        # What RunController._publish_queue does.
        views = [QueueEntryView(id=e.id, text=e.text, mode=e.mode, shell=e.shell) for e in entries]
        self.bus.publish(QueueUpdate(entries=views))

    def compose(self) -> ComposeResult:
        yield Input(id="editor")
        yield QueueList(self.bus)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    # Routed as RunController.edit_entry does while a run is going.
    def on_queue_list_edit_entry(self, message: QueueList.EditEntry) -> None:
        self.edits.append(message)
        if not self.queue.edit(message.entry_id, message.text):
            self.queue.add(message.text, message.mode)

    def on_queue_list_toggle_mode(self, message: QueueList.ToggleMode) -> None:
        self.queue.toggle_mode(message.entry_id)

    def on_queue_list_remove_entry(self, message: QueueList.RemoveEntry) -> None:
        self.queue.remove(message.entry_id)

    def on_queue_list_move_entry(self, message: QueueList.MoveEntry) -> None:
        self.queue.move(message.entry_id, message.offset)

    def on_queue_list_move_entry_to(self, message: QueueList.MoveEntryTo) -> None:
        self.queue.move_to(message.entry_id, message.index)

    def on_queue_list_leave(self, message: QueueList.Leave) -> None:
        self.leaves += 1
        self.query_one(Input).focus()


def texts(app: Host) -> list[str]:
    return [e.text for e in app.queue.entries]


def header(app: Host) -> str:
    return str(app.query_one("QueueList > .header").render())


async def fill(app: Host, pilot: Pilot[None], *items: tuple[str, str]) -> None:
    for text, mode in items:
        app.queue.add(text, mode)  # type: ignore[arg-type]
    await pilot.pause()


async def drag_move(pilot: Pilot[None], selector: str) -> None:
    # Pilot.hover always reports no button held; a terminal reports the held button
    # in motion events, and the list relies on that to tell a drag from a stale press.
    await pilot._post_mouse_events([events.MouseMove], selector, (2, 0), button=1)


async def test_hidden_when_empty_and_header_counts() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        ql = app.query_one(QueueList)
        assert ql.region.height == 0
        await fill(app, pilot, ("one", "steer"), ("two", "follow_up"), ("!ls", "steer"))
        assert ql.region.height >= 4
        assert header(app).startswith("Queued · 3")
        assert "Alt+Up back to editor" in header(app)
        app.queue.drain()
        await pilot.pause()
        assert ql.region.height == 0


async def test_badges_and_multiline_summary() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("go on", "steer"), ("a\nb\nc", "follow_up"), ("!ls", "steer"))
        badges = [str(row.query_one(".badge").render()) for row in app.query(QueueRow)]
        assert badges == ["steer", "follow-up", "shell"]
        assert app.query_one("#queue-entry-2 .badge").has_class("-follow_up")
        shown = str(app.query_one("#queue-entry-2", QueueRow).query_one(EntryText).render())
        assert shown == "a (+2 lines)"


def test_summary_keeps_line_count_when_cut() -> None:
    cut = summary("x" * 50 + "\nsecond", 20)
    assert cut.plain.endswith(" (+1 line)")
    assert cut.cell_len <= 20
    assert "…" in cut.plain


async def test_click_text_edits_in_place_and_enter_saves() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("first", "steer"), ("second", "steer"))
        row = app.query_one("#queue-entry-1", QueueRow)
        await pilot.click("#queue-entry-1 .text")
        await pilot.pause()
        assert isinstance(app.focused, EntryEditor)
        await pilot.press("space", "m", "o", "r", "e")
        # An update for another entry must not rebuild the row being edited.
        app.queue.add("third", "follow_up")
        await pilot.pause()
        assert app.query_one("#queue-entry-1", QueueRow) is row
        assert row.editing
        await pilot.press("enter")
        await pilot.pause()
        assert texts(app) == ["first more", "second", "third"]
        assert not row.query(EntryEditor)
        assert app.edits[-1].mode == "steer"


async def test_escape_cancels_edit_without_leaving() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("first", "steer"))
        await pilot.click("#queue-entry-1 .text")
        await pilot.press("x", "y", "escape")
        await pilot.pause()
        assert texts(app) == ["first"]
        assert not app.query(EntryEditor)
        assert app.edits == []
        assert app.leaves == 0


async def test_badge_click_toggles_but_not_for_shell() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("go", "steer"), ("!ls", "steer"))
        await pilot.click("#queue-entry-1 .badge")
        await pilot.pause()
        assert [e.mode for e in app.queue.entries] == ["follow_up", "steer"]
        assert str(app.query_one("#queue-entry-1 .badge").render()) == "follow-up"
        await pilot.click("#queue-entry-2 .badge")
        await pilot.pause()
        assert [e.mode for e in app.queue.entries] == ["follow_up", "steer"]


async def test_controls_delete_and_move() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("a", "steer"), ("b", "steer"), ("c", "follow_up"))
        await pilot.click("#queue-entry-1 .down")
        await pilot.pause()
        assert texts(app) == ["b", "a", "c"]
        await pilot.click("#queue-entry-3 .up")
        await pilot.pause()
        assert texts(app) == ["b", "c", "a"]
        rows = [row.entry.text for row in app.query(QueueRow)]
        assert rows == ["b", "c", "a"]
        await pilot.click("#queue-entry-3 .delete")
        await pilot.pause()
        assert texts(app) == ["b", "a"]
        assert header(app).startswith("Queued · 2")


async def test_drag_row_onto_another_reorders() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("a", "steer"), ("b", "steer"), ("c", "steer"), ("d", "steer"))
        await pilot.mouse_down("#queue-entry-1 .text")
        await drag_move(pilot, "#queue-entry-2 .text")
        assert app.mouse_captured is app.query_one(QueueList)
        await drag_move(pilot, "#queue-entry-3 .text")
        assert app.query_one("#queue-entry-3").has_class("-drop-target")
        await pilot.mouse_up("#queue-entry-3 .text")
        await pilot.pause()
        assert texts(app) == ["b", "c", "a", "d"]
        assert app.mouse_captured is None
        assert not app.query(".-drop-target")
        # And upwards: drop d on the first row.
        await pilot.mouse_down("#queue-entry-4 .badge")
        await drag_move(pilot, "#queue-entry-2 .badge")
        await pilot.mouse_up("#queue-entry-2 .badge")
        await pilot.pause()
        assert texts(app) == ["d", "b", "c", "a"]


async def test_press_and_release_on_same_row_moves_nothing() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("a", "steer"), ("b", "steer"))
        await pilot.mouse_down("#queue-entry-1 .text")
        await drag_move(pilot, "#queue-entry-1 .text")
        assert app.mouse_captured is None
        await pilot.mouse_up("#queue-entry-1 .text")
        await pilot.pause()
        assert texts(app) == ["a", "b"]


async def test_keyboard_select_edit_mode_delete_move_leave() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("a", "steer"), ("b", "steer"), ("c", "steer"))
        ql = app.query_one(QueueList)
        assert ql.focus_list()
        await pilot.pause()
        assert app.focused is ql
        assert "e edit" in header(app)
        await pilot.press("down")
        assert app.query_one("#queue-entry-2").has_class("-highlight")
        await pilot.press("m")
        await pilot.pause()
        assert [e.mode for e in app.queue.entries] == ["steer", "follow_up", "steer"]
        await pilot.press("e", "!", "enter")
        await pilot.pause()
        assert texts(app) == ["a", "b!", "c"]
        assert app.focused is ql
        await pilot.press("alt+down")
        await pilot.pause()
        assert texts(app) == ["a", "c", "b!"]
        await pilot.press("alt+up", "alt+up")
        await pilot.pause()
        assert texts(app) == ["b!", "a", "c"]
        await pilot.press("d")
        await pilot.pause()
        assert texts(app) == ["a", "c"]
        await pilot.press("escape")
        await pilot.pause()
        assert app.leaves == 1
        assert isinstance(app.focused, Input)


async def test_deleting_the_last_entry_hands_focus_back() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("only", "steer"))
        ql = app.query_one(QueueList)
        ql.focus_list()
        await pilot.press("delete")
        await pilot.pause()
        assert len(app.queue) == 0
        assert app.leaves == 1
        assert not ql.focus_list()


async def test_entry_taken_while_editing_keeps_the_edit() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("fix the test", "follow_up"), ("later", "steer"))
        await pilot.click("#queue-entry-1 .text")
        await pilot.press("!")
        app.queue.take("follow_up", "one-at-a-time")  # the loop took it
        await pilot.pause()
        row = app.query_one("#queue-entry-1", QueueRow)
        assert row.sent and row.has_class("-sent")
        assert row.query_one(".sent-note").display
        assert isinstance(app.focused, EntryEditor)
        assert header(app).startswith("Queued · 1")
        await pilot.press("enter")
        await pilot.pause()
        assert app.edits[-1].entry_id == 1
        # The original mode, so the re-queued edit is still a follow-up.
        assert app.edits[-1].mode == "follow_up"
        assert [(e.text, e.mode) for e in app.queue.entries] == [
            ("later", "steer"),
            ("fix the test!", "follow_up"),
        ]
        assert not app.query("#queue-entry-1")


async def test_saving_empty_text_deletes_the_entry() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("ab", "steer"), ("keep", "steer"))
        await pilot.click("#queue-entry-1 .text")
        await pilot.press("backspace", "backspace", "enter")
        await pilot.pause()
        assert texts(app) == ["keep"]
        assert app.edits == []


async def test_cancelling_the_last_sent_edit_hands_focus_back() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await fill(app, pilot, ("only", "steer"))
        await pilot.click("#queue-entry-1 .text")
        app.queue.take("steer", "all")
        await pilot.pause()
        assert app.query_one(QueueList).region.height > 0
        await pilot.press("escape")
        await pilot.pause()
        assert app.edits == [] and len(app.queue) == 0
        assert app.leaves == 1
        assert app.query_one(QueueList).region.height == 0
