"""Unsent input that must survive a crash: the input queue and the editor's draft.

Kept in `<session>.pending.json` beside the session file (see `store_paths`):

    {"version": 1,
     "entries": [{"text": "run the tests", "mode": "steer"},
                 {"text": "then commit", "mode": "follow_up"}],
     "draft": "what was in the editor"}

The file is replaced atomically on every change, so a kill at any moment leaves the
previous or the new state, never a mix; it is deleted once nothing is pending. On the
next start the app puts it all back into the editor (`restore_text`), the same way the
run controller restores the queue after an interrupt; nothing is sent on its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, get_args

from ink_tui.core.messages import QueueMode
from ink_tui.session.atomic_file import remove_file, write_atomic
from ink_tui.session.json_safe import to_json_bytes
from ink_tui.session.store_paths import pending_input_path

PENDING_VERSION = 1
_MODES: tuple[str, ...] = get_args(QueueMode)


class QueuedText(Protocol):
    """Anything with a text and a mode: `QueueEntry`, `QueueEntryView`, `PendingEntry`."""

    @property
    def text(self) -> str: ...

    @property
    def mode(self) -> QueueMode: ...


@dataclass(frozen=True, slots=True)
class PendingEntry:
    text: str
    mode: QueueMode = "steer"


@dataclass(slots=True)
class PendingInput:
    entries: list[PendingEntry] = field(default_factory=list)
    draft: str = ""
    # Set when the file was there but unreadable (its content is then lost).
    warning: str | None = None

    @property
    def empty(self) -> bool:
        return not self.entries and not self.draft.strip()

    def restore_text(self) -> tuple[str, int]:
        return restore_text(self.entries, self.draft)


def restore_text(entries: Sequence[QueuedText], draft: str) -> tuple[str, int]:
    """The editor text to restore and how many queued entries it holds.

    Queued texts joined by blank lines, then the draft below them: the order the run
    controller and the input box use when they restore a queue above a draft.
    """
    parts = [entry.text for entry in entries]
    if draft.strip():
        parts.append(draft)
    return "\n\n".join(parts), len(entries)


class PendingInputStore:
    def __init__(self, session_path: Path) -> None:
        self.path = pending_input_path(Path(session_path))
        # What the file holds now (None: unknown), so unchanged state is not rewritten:
        # the draft may be saved on every keystroke and each save fsyncs.
        self._saved: bytes | None = None

    def save(self, entries: Sequence[QueuedText], draft: str) -> None:
        """Persist the queue and the draft; delete the file when both are empty."""
        if not entries and not draft.strip():
            if self._saved != b"":
                remove_file(self.path)
                self._saved = b""
            return
        payload: dict[str, Any] = {
            "version": PENDING_VERSION,
            "entries": [{"text": e.text, "mode": e.mode} for e in entries],
            "draft": draft,
        }
        data = to_json_bytes(payload, indent=1)
        if data != self._saved:
            write_atomic(self.path, data)
            self._saved = data

    def clear(self) -> None:
        self.save([], "")

    def load(self) -> PendingInput:
        """What was pending; empty when there is no file, empty + warning when corrupt."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return PendingInput()
        except OSError as error:
            return PendingInput(warning=f"could not read {self.path}: {error.strerror or error}")
        try:
            return _decode(json.loads(data))
        except (ValueError, TypeError) as error:
            return PendingInput(
                warning=f"{self.path} is damaged ({error}); the unsent input in it is lost"
            )


def _decode(obj: Any) -> PendingInput:
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    raw_entries = obj.get("entries", [])
    draft = obj.get("draft", "")
    if not isinstance(raw_entries, list) or not isinstance(draft, str):
        raise ValueError("'entries' must be a list and 'draft' a string")
    entries = []
    for raw in raw_entries:
        if not isinstance(raw, dict):
            raise ValueError("an entry is not an object")
        text, mode = raw.get("text"), raw.get("mode", "steer")
        if not isinstance(text, str) or mode not in _MODES:
            raise ValueError(f"an entry has a bad text or mode ({mode!r})")
        entries.append(PendingEntry(text=text, mode=mode))
    return PendingInput(entries=entries, draft=draft)
