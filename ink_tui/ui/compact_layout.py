"""Which panels give way, and how far, when the terminal is short: one pure function.

The transcript keeps at least `MIN_TRANSCRIPT_ROWS` rows whenever the terminal is at
least the size the too-small notice allows. Panels give way in this order, each only as
far as needed: the activity panel to one line, then the queue to a count ("2 queued ·
Ctrl+Q to edit"), then the approval question to its essentials (the call on one line and
its key hint). The App applies the result as a `-compact` class on each widget, which
draws its compact form itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MIN_TRANSCRIPT_ROWS = 4

# Rows each panel takes in its compact form (the question keeps its top border).
ACTIVITY_LINE_ROWS = 1
QUEUE_COUNT_ROWS = 1
QUESTION_ESSENTIAL_ROWS = 3

Mode = Literal["full", "compact"]


@dataclass(frozen=True, slots=True)
class Showing:
    """What is on screen besides the transcript, each as the rows it takes in full
    (0: not showing)."""

    activity: int = 0
    queue: int = 0
    question: int = 0
    # The input, the hint row and the status bar: they never give way.
    fixed: int = 5


@dataclass(frozen=True, slots=True)
class Layout:
    activity: Mode = "full"
    queue: Mode = "full"
    question: Mode = "full"

    def rows(self, showing: Showing) -> int:
        """Rows the panels take in this layout."""
        return (
            _rows(showing.activity, self.activity, ACTIVITY_LINE_ROWS)
            + _rows(showing.queue, self.queue, QUEUE_COUNT_ROWS)
            + _rows(showing.question, self.question, QUESTION_ESSENTIAL_ROWS)
        )


def _rows(full: int, mode: Mode, compact: int) -> int:
    if full <= 0:
        return 0
    return full if mode == "full" else min(full, compact)


def plan_layout(height: int, showing: Showing, min_transcript: int = MIN_TRANSCRIPT_ROWS) -> Layout:
    """The least compact layout that leaves the transcript `min_transcript` rows; the
    most compact one when none does."""
    room = height - showing.fixed - min_transcript
    steps = (
        Layout(),
        Layout(activity="compact"),
        Layout(activity="compact", queue="compact"),
        Layout(activity="compact", queue="compact", question="compact"),
    )
    for layout in steps:
        if layout.rows(showing) <= room:
            return layout
    return steps[-1]
