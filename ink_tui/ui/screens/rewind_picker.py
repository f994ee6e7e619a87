"""The rewind picker (Esc Esc, /rewind, /fork): the branch's user messages, newest first.

Each row reads "14:02  make the tests pass…   3 files changed": the message's local
time, its first line, and how many files its run changed (nothing when none). The
newest is highlighted; type to filter, Enter picks. The result is the message's entry
id, `UNDO_KEY` for the "Undo the last code restore" row (offered when the session has
a file restore to undo), or None when cancelled.

Times come from the session file; while the UI clock is frozen (the pictures) they are
shown as one fixed time, as `clock.shown_duration` shows durations, so a picture does
not depend on when it was made.
"""

from __future__ import annotations

import datetime as dt

from ink_tui.session.rewind import UserTurn
from ink_tui.ui import clock
from ink_tui.ui.screens.list_picker import ListPicker, PickerRow
from ink_tui.ui.screens.session_picker import first_line

UNDO_KEY = "\0undo"
UNDO_LABEL = "↶  Undo the last code restore"
PICTURE_TIME = "09:41"
KINDS = {"steer": "steer", "follow_up": "follow-up"}
# A message's first line in a row; the picker's frame cuts it further to fit.
TEXT_WIDTH = 80


def shown_time(iso: str | None, today: dt.date | None = None) -> str:
    """A time as the pickers show it: "14:02" today, "Mar 14 14:02" another day (local
    time); "" when unknown."""
    if iso is None:
        return ""
    if clock.is_frozen():
        return PICTURE_TIME
    try:
        moment = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return ""
    local = moment.astimezone()
    if local.date() == (today or dt.date.today()):
        return local.strftime("%H:%M")
    return local.strftime("%b %d %H:%M")


def files_changed(count: int) -> str:
    if count == 0:
        return ""
    return "1 file changed" if count == 1 else f"{count} files changed"


def turn_row(turn: UserTurn) -> PickerRow:
    when = shown_time(turn.time)
    text = first_line(turn.text, TEXT_WIDTH)
    label = f"{when}  {text}" if when else text
    # A steer or follow-up sent while a run worked says so: it went back into that run.
    kind = KINDS.get(turn.kind, "")
    changed = files_changed(len(turn.changed_files))
    return (turn.entry_id, label, " · ".join(part for part in (kind, changed) if part))


def picker_rows(
    turns: list[UserTurn], *, can_undo: bool = False, undo_files: int = 0
) -> list[PickerRow]:
    """Newest first (`turns` comes oldest first), the undo row on top when offered
    (`undo_files`: how many files the restore it undoes changed)."""
    rows = [turn_row(turn) for turn in reversed(turns)]
    if can_undo:
        back = "1 file back" if undo_files == 1 else f"{undo_files} files back"
        rows.insert(0, (UNDO_KEY, UNDO_LABEL, back if undo_files else ""))
    return rows


class RewindPicker(ListPicker):
    """Pick one of the branch's user messages; the result is its entry id (or
    `UNDO_KEY`), None when cancelled."""

    def __init__(
        self,
        turns: list[UserTurn],
        *,
        title: str = "Rewind to before a message",
        can_undo: bool = False,
        undo_files: int = 0,
    ) -> None:
        newest = turns[-1].entry_id if turns else None
        super().__init__(
            title,
            picker_rows(turns, can_undo=can_undo, undo_files=undo_files),
            newest,
            placeholder="Type to filter the messages",
        )
