"""What the user submitted before, walked with Up and Down in the input box.

Pure state, no Textual: the widget asks for the previous or next entry and shows it.
Walking starts at the newest entry; the text the user was typing (the draft) is kept
aside when the walk starts and handed back when they walk down past the newest entry,
so browsing never loses unsent input.
"""

from __future__ import annotations

from collections.abc import Iterable

DEFAULT_LIMIT = 1_000


class InputHistory:
    """Submitted inputs, oldest first, with a cursor for walking them.

    `entries` and the constructor take plain strings so the history can be saved and
    loaded by whoever owns the session; this class does no I/O.
    """

    def __init__(self, entries: Iterable[str] = (), *, limit: int = DEFAULT_LIMIT) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self._limit = limit
        self._entries: list[str] = []
        # None: not walking. Otherwise the index of the entry on show; len(entries) would
        # be the draft, but we leave walking mode instead of ever sitting there.
        self._index: int | None = None
        self._draft = ""
        # Loaded entries go through the same rules as typed ones, so a saved file with
        # blanks, repeats or more than `limit` lines still gives a clean history.
        for text in entries:
            self.add(text)

    @property
    def entries(self) -> list[str]:
        """A copy of the entries, oldest first."""
        return list(self._entries)

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def browsing(self) -> bool:
        """True while an entry (not the draft) is on show."""
        return self._index is not None

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, text: str) -> None:
        """Record a submitted text. Blanks and a repeat of the newest entry are skipped.

        Adding ends any walk: the next Up starts again from the newest entry.
        """
        self.reset()
        if not text.strip():
            return
        if self._entries and self._entries[-1] == text:
            return
        self._entries.append(text)
        if len(self._entries) > self._limit:
            del self._entries[: len(self._entries) - self._limit]

    def previous(self, current_draft: str) -> str | None:
        """The entry before the one on show (the newest when a walk starts), or None.

        `current_draft` is what the editor holds; it is remembered only when a walk
        starts, since later calls get a history entry back, not the user's draft.
        None means there is nothing older: the caller leaves the editor as it is.
        """
        if not self._entries:
            return None
        if self._index is None:
            self._draft = current_draft
            self._index = len(self._entries)
        if self._index == 0:
            return None
        self._index -= 1
        return self._entries[self._index]

    def next(self) -> str | None:
        """The entry after the one on show, the saved draft past the newest, or None.

        None means no walk is going on, so Down should move the cursor as usual.
        """
        if self._index is None:
            return None
        self._index += 1
        if self._index < len(self._entries):
            return self._entries[self._index]
        draft = self._draft
        self._index = None
        self._draft = ""
        return draft

    def reset(self) -> None:
        """Stop walking. A draft saved when the walk began is kept as the newest entry.

        The walk can end without the draft coming back (the user submits or edits a
        recalled entry); what they had typed must not be lost, so Up finds it again.
        """
        walking, draft = self._index is not None, self._draft
        self._index = None
        self._draft = ""
        if walking and draft.strip() and (not self._entries or self._entries[-1] != draft):
            self._entries.append(draft)
            if len(self._entries) > self._limit:
                del self._entries[: len(self._entries) - self._limit]
