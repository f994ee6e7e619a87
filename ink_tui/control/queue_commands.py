"""What a front end does to the run controller's input queue, run or no run.

Entries are edited, moved, re-moded and removed in place; a `queue_update` goes out after
each change (with `paused` while an interrupt holds the queue). An edit of an entry the
loop took meanwhile is not lost: it is queued again, or handed to the editor when no run
is left to take it. The controller mixes this in; it owns the queue and the bus.
"""

from __future__ import annotations

from ink_tui.control.bus import EventBus
from ink_tui.control.input_queue import InputQueue, QueueEntry
from ink_tui.control.settling import Settling
from ink_tui.core.events import Event, InputRestored, Notice, QueueEntryView, QueueUpdate, RunState
from ink_tui.core.messages import QueueMode


class QueueCommands:
    queue: InputQueue
    # The queue is held after an interrupt (interrupt_queue = "keep").
    queue_paused: bool
    state: RunState
    bus: EventBus
    _settling: Settling

    def _emit(self, event: Event) -> None:
        raise NotImplementedError  # the controller's: stamps the run id, publishes

    def pull_queue_to_editor(self) -> int:
        """Move every queued entry of the user's back to the editor without stopping the
        run (an extension's entries stay queued)."""
        return self._settling.restore_queue(
            "Moved {n} queued {inputs} back to the editor.", drop=False
        )

    def clear_queue(self) -> list[QueueEntry]:
        """Take every queued entry out and hand them to the caller: nothing is restored,
        so an abort right after has nothing to put back."""
        return self.queue.drain()

    def edit_entry(self, entry_id: int, text: str, mode: QueueMode = "steer") -> None:
        """Save an edit. If the loop took the entry meanwhile, the edit is not lost: it is
        queued again as a new entry (or, with no run left to take it, goes to the editor)."""
        if self.queue.edit(entry_id, text):
            return
        if self.state == "running":
            self.queue.add(text, mode)
            self._emit(Notice(text="That entry was already sent; your edit is queued again."))
        else:
            self.bus.publish(InputRestored(text=text, count=1))
            self._emit(Notice(text="That entry was already sent; your edit is in the editor."))

    def toggle_entry_mode(self, entry_id: int) -> bool:
        return self.queue.toggle_mode(entry_id)

    def set_entry_mode(self, entry_id: int, mode: QueueMode) -> bool:
        return self.queue.set_mode(entry_id, mode)

    def move_entry(self, entry_id: int, offset: int) -> bool:
        return self.queue.move(entry_id, offset)

    def move_entry_to(self, entry_id: int, index: int) -> bool:
        return self.queue.move_to(entry_id, index)

    def remove_entry(self, entry_id: int) -> QueueEntry | None:
        return self.queue.remove(entry_id)

    def _set_paused(self, paused: bool) -> None:
        if paused != self.queue_paused:
            self.queue_paused = paused
            self._publish_queue(self.queue.entries)

    def _publish_queue(self, entries: list[QueueEntry]) -> None:
        self._emit(QueueUpdate(entries=queue_views(entries), paused=self.queue_paused))


def queue_views(entries: list[QueueEntry]) -> list[QueueEntryView]:
    """A queue's entries as a `queue_update` carries them (a sub-agent's queue too)."""
    return [
        QueueEntryView(
            id=e.id,
            text=e.text,
            mode=e.mode,
            shell=e.shell,
            source=e.source,
            custom_type=e.custom_type,
        )
        for e in entries
    ]
