"""Where a session's event seqs come from (see `public_events.PublicProjection`).

A client resumes a stream by the last seq it saw, so a seq must never repeat for a
session id: a recorded session's seqs (`session.event_seqs.EventSeqs`) go on from where
the session left off, across reopen and process restart.
"""

from __future__ import annotations

from typing import Protocol


class SeqSource(Protocol):
    """Where a session's seqs come from: `last` handed out so far, `next()` the next.

    A recorded session's (`session.event_seqs.EventSeqs`) goes on from where the session
    left off, so a seq never repeats for a session id across reopen and restart."""

    @property
    def last(self) -> int: ...

    def next(self) -> int: ...


class CountingSeqs:
    """Seqs kept in memory only, from `last` + 1 (a session that is not recorded)."""

    def __init__(self, last: int = 0) -> None:
        self.last = last

    def next(self) -> int:
        self.last += 1
        return self.last
