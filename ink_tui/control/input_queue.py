"""The input queue: what the user typed while a run was busy.

Pure state, no I/O. Entries keep a stable id; every change calls `on_change` with the
whole queue so the controller can publish it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from ink_tui.core.messages import QueueMode

TakeMode = Literal["all", "one-at-a-time"]
TAKE_MODES: tuple[TakeMode, ...] = get_args(TakeMode)


def is_shell_line(text: str) -> bool:
    return text.startswith("!")


@dataclass(slots=True)
class QueueEntry:
    id: int
    text: str
    mode: QueueMode
    # "user", or the name of the extension that queued it: its message reaches the
    # model marked as the extension's (`UserMessage.source`), never as the user's.
    source: str = "user"
    custom_type: str | None = None

    @property
    def shell(self) -> bool:
        # Only the user's own `!` lines run in the shell; an extension's text never does.
        return self.source == "user" and is_shell_line(self.text)


class InputQueue:
    def __init__(self, on_change: Callable[[list[QueueEntry]], None] | None = None) -> None:
        self._entries: list[QueueEntry] = []
        self._next_id = 1
        self._on_change = on_change

    @property
    def entries(self) -> list[QueueEntry]:
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, entry_id: int) -> QueueEntry | None:
        return next((e for e in self._entries if e.id == entry_id), None)

    def add(
        self,
        text: str,
        mode: QueueMode,
        *,
        source: str = "user",
        custom_type: str | None = None,
    ) -> QueueEntry:
        entry = QueueEntry(self._next_id, text, mode, source, custom_type)
        self._next_id += 1
        self._entries.append(entry)
        self._changed()
        return entry

    def edit(self, entry_id: int, text: str) -> bool:
        """Replace an entry's text; False when the entry is gone (taken or removed)."""
        entry = self.get(entry_id)
        if entry is None:
            return False
        entry.text = text
        self._changed()
        return True

    def set_mode(self, entry_id: int, mode: QueueMode) -> bool:
        entry = self.get(entry_id)
        if entry is None:
            return False
        entry.mode = mode
        self._changed()
        return True

    def toggle_mode(self, entry_id: int) -> bool:
        entry = self.get(entry_id)
        if entry is None:
            return False
        return self.set_mode(entry_id, "follow_up" if entry.mode == "steer" else "steer")

    def move(self, entry_id: int, offset: int) -> bool:
        """Move an entry up (negative) or down (positive), clamped to the ends."""
        entry = self.get(entry_id)
        if entry is None:
            return False
        index = self._entries.index(entry)
        return self.move_to(entry_id, index + offset)

    def move_to(self, entry_id: int, index: int) -> bool:
        entry = self.get(entry_id)
        if entry is None:
            return False
        old = self._entries.index(entry)
        new = max(0, min(index, len(self._entries) - 1))
        if new == old:
            return False
        self._entries.pop(old)
        self._entries.insert(new, entry)
        self._changed()
        return True

    def remove(self, entry_id: int) -> QueueEntry | None:
        entry = self.get(entry_id)
        if entry is None:
            return None
        self._entries.remove(entry)
        self._changed()
        return entry

    def take(self, mode: QueueMode, how: TakeMode) -> list[QueueEntry]:
        """Take entries of `mode` in queue order (the loop's view: shell lines stay)."""
        taken: list[QueueEntry] = []
        for entry in self._entries:
            if entry.mode == mode and not entry.shell:
                taken.append(entry)
                if how == "one-at-a-time":
                    break
        if taken:
            taken_ids = {e.id for e in taken}
            self._entries = [e for e in self._entries if e.id not in taken_ids]
            self._changed()
        return taken

    def take_first(self) -> QueueEntry | None:
        """Take the first entry of any kind (settling a completed run)."""
        if not self._entries:
            return None
        entry = self._entries.pop(0)
        self._changed()
        return entry

    def drain(self, which: Callable[[QueueEntry], bool] | None = None) -> list[QueueEntry]:
        """Take every entry, or every one `which` accepts (restoring them to the editor)."""
        if which is None:
            taken, self._entries = self._entries, []
        else:
            taken = [e for e in self._entries if which(e)]
            self._entries = [e for e in self._entries if not which(e)]
        if taken:
            self._changed()
        return taken

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.entries)
