"""What a folded tool result shows: the lines that matter for its kind.

One pure function, `fold_view(lines, kind, notes)`, decides it:

- a result of at most `SHORT_LINES` lines (notes aside) is not folded: it is shown whole;
- `"tail"` (command output: bash calls and `!` lines): its last `TAIL_LINES` output lines,
  with the count of those hidden above; the notes after the output (the exit code, the
  "[output cut …]" line) are always shown, below it;
- `"diff"` (an edit's or a write's diff): each hunk's header and its `-`/`+` lines, in
  order, up to `DIFF_BUDGET` lines; what budget is left goes to one context line before
  and after each run of changes; then the count of the lines not shown;
- `"head"` (everything else: read, grep, find, ls): its first `HEAD_LINES` lines, since
  what a file or a listing starts with is what tells it apart; then the count of the rest.

Expanding a fold always shows the whole result; this only chooses the collapsed view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

FoldKind = Literal["head", "tail", "diff"]

SHORT_LINES = 8
HEAD_LINES = 4
TAIL_LINES = 5
DIFF_BUDGET = 12


@dataclass(frozen=True, slots=True)
class FoldView:
    """A collapsed result: `lines` in order, `above` output lines hidden before them (a
    tail), `more` lines hidden elsewhere (after a head, between and after a diff's)."""

    lines: tuple[str, ...]
    above: int = 0
    more: int = 0

    @property
    def hidden(self) -> int:
        return self.above + self.more


def is_change(line: str) -> bool:
    """A diff line that adds or removes (file headers `---`/`+++` are not changes)."""
    return line.startswith(("+", "-")) and not line.startswith(("--- ", "+++ "))


def fold_view(lines: Sequence[str], kind: FoldKind, notes: int = 0) -> FoldView | None:
    """The collapsed view of `lines`, or None when they are shown whole (short).

    `notes`: how many of the last lines are the tool's notes rather than output (a
    blank separator, "exit code 0"); a tail fold keeps them, and they do not count as
    output for "short"."""
    notes = max(0, min(notes, len(lines)))
    output = len(lines) - notes
    if output <= SHORT_LINES:
        return None
    if kind == "tail":
        kept = tuple(lines[output - TAIL_LINES :])
        return FoldView(kept, above=output - TAIL_LINES)
    if kind == "diff":
        return _diff_view(lines)
    return FoldView(tuple(lines[:HEAD_LINES]), more=len(lines) - HEAD_LINES)


def _diff_view(lines: Sequence[str]) -> FoldView:
    # First the hunk headers and changes, in order, while the budget lasts...
    chosen: set[int] = set()
    for index, line in enumerate(lines):
        if len(chosen) >= DIFF_BUDGET:
            break
        if line.startswith("@@") or is_change(line):
            chosen.add(index)
    # ...then one context line on each side of a run of changes, with what is left.
    changes = sorted(i for i in chosen if is_change(lines[i]))
    for index in changes:
        for near in (index - 1, index + 1):
            if len(chosen) >= DIFF_BUDGET:
                break
            if 0 <= near < len(lines) and near not in chosen and _is_context(lines[near]):
                chosen.add(near)
    kept = tuple(lines[i] for i in sorted(chosen))
    return FoldView(kept, more=len(lines) - len(kept))


def _is_context(line: str) -> bool:
    return not line.startswith("@@") and not is_change(line)
