"""The queue of an `AgentSession`: input waiting for the running run, and changing it.

Steers and follow-ups queued while busy (`prompt(deliver_as=...)`, `steer`, `follow_up`)
wait here until the run takes them. A program lists and clears them, and by entry id
edits, re-modes, moves and removes one, each through the session's `RunController`.
An entry the run has taken already, or one removed, is gone: `edit`, `set_mode`,
`move` and `remove` raise `QueueEntryGone` for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ink_tui.api.session_results import QueuedInput, QueueEntryGone
from ink_tui.core.messages import QueueMode

if TYPE_CHECKING:
    from ink_tui.control.controller import RunController


class QueueEditing:
    """Mixed into `AgentSession` (api/session.py), which sets `controller`."""

    controller: RunController

    @property
    def queue(self) -> list[QueuedInput]:
        return [QueuedInput(e.id, e.text, e.mode, e.source) for e in self.controller.queue.entries]

    def clear_queue(self) -> list[QueuedInput]:
        """Remove every queued entry; returns them (nothing goes back to an editor)."""
        return [QueuedInput(e.id, e.text, e.mode, e.source) for e in self.controller.clear_queue()]

    def edit(self, entry_id: int, text: str) -> None:
        self._entry(entry_id)
        if not text.strip():
            raise ValueError("the text is empty; remove the entry instead")
        self.controller.queue.edit(entry_id, text)

    def set_mode(self, entry_id: int, mode: QueueMode) -> None:
        self._entry(entry_id)
        self.controller.set_entry_mode(entry_id, mode)

    def move(self, entry_id: int, to: int) -> None:
        """Move an entry to position `to` (0 is first; clamped to the ends)."""
        self._entry(entry_id)
        self.controller.move_entry_to(entry_id, to)

    def remove(self, entry_id: int) -> QueuedInput:
        entry = self._entry(entry_id)
        self.controller.remove_entry(entry_id)
        return entry

    def _entry(self, entry_id: int) -> QueuedInput:
        entry = self.controller.queue.get(entry_id)
        if entry is None:
            raise QueueEntryGone(f"no queued entry has id {entry_id} (sent or removed?)")
        return QueuedInput(entry.id, entry.text, entry.mode, entry.source)
