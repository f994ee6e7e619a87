"""What a session list shows about one saved session (the picker, /sessions)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class SessionSummary:
    id: str
    path: Path
    started: dt.datetime
    # The first prompt of the session, as typed (may be long or multi-line).
    first_prompt: str
    # User and assistant messages in the file (tool results not counted).
    message_count: int
    model: str
    # Damaged lines the reader skipped (see `session_reader`); the session is still listed.
    skipped_lines: tuple[int, ...] = ()
