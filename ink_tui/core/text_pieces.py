"""Text gathered a delta at a time, held in few objects (a streamed reply's text)."""

from __future__ import annotations


class Pieces:
    """Text gathered a delta at a time, held in few objects.

    A fast reply is tens of thousands of deltas of a few characters; one string each in a
    list is that many objects for every full garbage collection to walk while the reply
    streams. Every `GROUP` pieces are joined into one (each character is copied once more,
    never again), so a reply of 70,000 deltas is a few hundred strings.
    """

    GROUP = 256

    __slots__ = ("_groups", "_recent")

    def __init__(self) -> None:
        self._groups: list[str] = []
        self._recent: list[str] = []

    def append(self, piece: str) -> None:
        recent = self._recent
        recent.append(piece)
        if len(recent) >= self.GROUP:
            self._groups.append("".join(recent))
            recent.clear()

    def text(self) -> str:
        """Everything appended, in order."""
        return "".join(self._groups) + "".join(self._recent)
