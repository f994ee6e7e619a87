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

from ink_tui.session.entries import Entry, EntryError, UnknownEntryType, decode_entry
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
    for raw in reversed(lines):
        if len(tail) == entries:
            break
        if fill is not None and fill.full:
            break
        entry = _decode(raw)
        if entry is not None:
            tail.append(entry if fill is None else fill.take(entry))
    tail.reverse()
    return tail


def _decode(raw: bytes) -> Entry | None:
    if not raw.strip():
        return None
    try:
        return decode_entry(json.loads(raw))
    except (ValueError, EntryError, UnknownEntryType):
        return None
