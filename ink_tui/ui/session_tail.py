"""The end of a saved session, read from the end of its file: what a resume shows first.

Reading a big session whole takes a while (a 20 MB file, a few hundred milliseconds, and
as long again to rebuild its transcript). The user looks at its end, and that is a few
kilobytes: `read_tail` reads the file backwards from its end, a block at a time, until
it holds `TAIL_ENTRIES` whole entries (or the file's start), and decodes only those.
The app draws them at once (`ResumePreview`) while the whole file is read and its
transcript built, then shows that in their place. Given the screen's size it stops at
what fills the screen (`tail_rows`): each answer in the tail is markdown drawn before
the session's end shows.

Nothing here judges the file: a line that does not decode (a torn last line, a damaged
one, a type this version does not know) is left out, and the full read reports it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ink_tui.session.entries import (
    CheckpointEntry,
    Entry,
    EntryError,
    RewindEntry,
    UnknownEntryType,
    decode_entry,
)
from ink_tui.ui.tail_rows import ScreenFill

# A tall terminal's worth of a session's end (some eight answers and their tools), few
# enough to draw in the first frames: each answer there is markdown rendered before the
# user sees the end (40 entries took ~90 ms on the UI loop).
TAIL_ENTRIES = 16
_BLOCK_BYTES = 64 * 1024
# A tail of a few huge entries (tool output) stops here: the preview is only a preview.
_MAX_TAIL_BYTES = 4 * 1024 * 1024


def read_tail(
    path: Path, entries: int = TAIL_ENTRIES, screen: tuple[int, int] | None = None
) -> list[Entry]:
    """The last `entries` entries of the session in `path` that decode, oldest first;
    with `screen` (the transcript's width and height), only as many as fill it, the
    oldest cut to what shows of it."""
    fill = ScreenFill(*screen) if screen is not None else None
    with open(path, "rb") as file:
        end = file.seek(0, os.SEEK_END)
        start = end
        data = b""
        while True:
            start = max(0, start - _BLOCK_BYTES)
            file.seek(start)
            data = file.read(end - start)
            # Whole lines only: the first is cut unless it starts the file, and line 1
            # is the header, not an entry.
            lines = data.split(b"\n")[1:]
            if start == 0 or len(lines) > entries or end - start >= _MAX_TAIL_BYTES:
                break
    tail: list[Entry] = []
    branch = _Branch()
    for raw in reversed(lines):
        if len(tail) == entries or branch.ended:
            break
        if fill is not None and fill.full:
            break
        line = _decode(raw)
        if line is not None and branch.takes(*line):
            tail.append(line[1] if fill is None else fill.take(line[1]))
    tail.reverse()
    return tail


class _Branch:
    """Walking a file backwards, which lines are on the current branch (the path to the
    leaf, session/session_tree.py): each taken node names its parent, the one to take
    next; the last `rewind` line, met first, names the leaf. Lines from before the tree
    (no ids) are all on the one branch."""

    def __init__(self) -> None:
        self.wanted: str | None = None
        self.known = False  # whether `wanted` is set (None can be: before the first)
        self.ended = False

    def takes(self, obj: dict[str, object], entry: Entry) -> bool:
        if isinstance(entry, RewindEntry):
            if not self.known:
                self.wanted, self.known = entry.leaf_id, True
                self.ended = entry.leaf_id is None
            return False
        entry_id = obj.get("id")
        if self.known and isinstance(entry_id, str) and entry_id != self.wanted:
            return False  # another branch's
        if "parent_id" in obj:
            parent = obj["parent_id"]
            self.wanted, self.known = (parent if isinstance(parent, str) else None), True
            self.ended = parent is None
        return not isinstance(entry, CheckpointEntry)


def _decode(raw: bytes) -> tuple[dict[str, object], Entry] | None:
    if not raw.strip():
        return None
    try:
        obj = json.loads(raw)
        return obj, decode_entry(obj)
    except (ValueError, EntryError, UnknownEntryType):
        return None
