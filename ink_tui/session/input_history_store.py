"""The input box history of a workspace, kept across sessions.

One JSON list of strings, oldest first (newest last), at most `HISTORY_LIMIT` long, in
`input_history.json` in the workspace's store folder (see `store_paths`). Replaced
atomically, so a crash never leaves it half written. Cleaning (blanks, repeats) is the
input history's job (`ink_tui.ui.input_history`); this only stores the list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ink_tui.session.atomic_file import write_atomic
from ink_tui.session.json_safe import to_json_bytes
from ink_tui.session.store_paths import input_history_path

HISTORY_LIMIT = 1_000


class InputHistoryStore:
    def __init__(self, workspace: Path | str, root: Path | None = None) -> None:
        self.path = input_history_path(workspace, root)
        # Set by `load` when the file was there but unusable.
        self.warning: str | None = None

    def load(self) -> list[str]:
        """The saved entries, oldest first; [] when missing or damaged (see `warning`)."""
        self.warning = None
        try:
            data = json.loads(self.path.read_bytes())
        except (FileNotFoundError, NotADirectoryError):
            # NotADirectoryError: a file sits where the store's folder should be, so there
            # is no history yet; the app reports the unusable store when the session starts.
            return []
        except (OSError, ValueError) as error:
            self.warning = f"could not read the input history {self.path}: {error}"
            return []
        if not isinstance(data, list):
            self.warning = f"the input history {self.path} is not a JSON list; starting afresh"
            return []
        # Skip odd items rather than lose the whole history over one.
        return [item for item in data if isinstance(item, str)][-HISTORY_LIMIT:]

    def save(self, entries: Sequence[str]) -> None:
        """Replace the saved history with `entries` (oldest first), keeping the newest."""
        write_atomic(self.path, to_json_bytes(list(entries)[-HISTORY_LIMIT:], indent=0))

    def append(self, text: str) -> None:
        """Add one submitted text, re-reading the file first so that two apps open on
        the same workspace do not erase each other's entries."""
        entries = self.load()
        if entries and entries[-1] == text:
            return
        entries.append(text)
        self.save(entries)
