"""What a folded tool result shows (`fold_view`): unit cases and properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ink_tui.ui.blocks.fold_view import (
    DIFF_BUDGET,
    HEAD_LINES,
    SHORT_LINES,
    TAIL_LINES,
    FoldView,
    fold_view,
    is_change,
)


def numbers(count: int) -> list[str]:
    return [str(n) for n in range(1, count + 1)]


def test_a_few_lines_are_shown_whole_whatever_the_kind() -> None:
    for kind in ("head", "tail", "diff"):
        assert fold_view(numbers(SHORT_LINES), kind) is None  # type: ignore[arg-type]
    assert fold_view([], "head") is None
    # `!ls -la`: seven lines and the notes (a blank, the exit code) are not folded.
    assert fold_view([*numbers(7), "", "exit code 0"], "tail", notes=2) is None


def test_command_output_keeps_its_last_lines_and_its_notes() -> None:
    lines = [*numbers(500), "", "exit code 0"]
    view = fold_view(lines, "tail", notes=2)
    assert view == FoldView(("496", "497", "498", "499", "500", "", "exit code 0"), above=495)
    assert view.hidden == 495


def test_a_read_keeps_its_first_lines() -> None:
    assert fold_view(numbers(10), "head") == FoldView(("1", "2", "3", "4"), more=6)


EDIT = [
    "@@ -17,7 +17,7 @@",
    " def total(items):",
    "     count = 0",
    "     for item in items:",
    "-        count += item",
    "+        count += item.price",
    "     return count",
    "",
    " print(total([]))",
]


def test_a_diff_shows_its_changed_lines_with_a_context_line_around() -> None:
    view = fold_view(EDIT, "diff")
    assert view is not None
    assert view.lines == (
        "@@ -17,7 +17,7 @@",
        "     for item in items:",
        "-        count += item",
        "+        count += item.price",
        "     return count",
    )
    assert view.more == 4 and view.above == 0


def test_a_long_diff_shows_changes_up_to_the_budget_then_counts_the_rest() -> None:
    lines = [
        "@@ -1,40 +1,40 @@",
        *(f"-old {n}" for n in range(20)),
        *(f"+new {n}" for n in range(20)),
    ]
    view = fold_view(lines, "diff")
    assert view is not None
    assert view.lines == tuple(lines[:DIFF_BUDGET])
    assert view.more == len(lines) - DIFF_BUDGET


def test_every_hunk_header_is_kept_while_the_budget_lasts() -> None:
    hunks = [[f"@@ -{n}0 +{n}0 @@", " a", " b", f"-x{n}", f"+y{n}", " c", " d"] for n in (1, 2)]
    view = fold_view([*hunks[0], *hunks[1]], "diff")
    assert view is not None
    assert [line for line in view.lines if line.startswith("@@")] == [
        "@@ -10 +10 @@",
        "@@ -20 +20 @@",
    ]
    assert [line for line in view.lines if is_change(line)] == ["-x1", "+y1", "-x2", "+y2"]


# --- properties -------------------------------------------------------------------------

diff_line = st.one_of(
    st.builds(lambda t: "@@ -1 +1 @@" + t, st.text(max_size=5)),
    st.builds(lambda t: "+" + t, st.text(max_size=8)),
    st.builds(lambda t: "-" + t, st.text(max_size=8)),
    st.builds(lambda t: " " + t, st.text(max_size=8)),
)
plain_line = st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=10)


def is_subsequence(part: tuple[str, ...], whole: list[str]) -> bool:
    rest = iter(whole)
    return all(any(line == other for other in rest) for line in part)


@given(st.lists(diff_line, max_size=60))
def test_a_diff_fold_hides_no_change_within_its_budget_and_counts_what_it_hides(
    lines: list[str],
) -> None:
    view = fold_view(lines, "diff")
    if len(lines) <= SHORT_LINES:
        assert view is None
        return
    assert view is not None
    assert len(view.lines) <= DIFF_BUDGET and view.above == 0
    assert len(view.lines) + view.more == len(lines)
    assert is_subsequence(view.lines, lines)
    key = [line for line in lines if line.startswith("@@") or is_change(line)]
    if len(key) <= DIFF_BUDGET:
        # Every header and change fits: none is hidden.
        assert [line for line in view.lines if line.startswith("@@") or is_change(line)] == key
    else:
        assert list(view.lines) == key[:DIFF_BUDGET]


@given(st.lists(plain_line, max_size=40), st.integers(min_value=0, max_value=3))
def test_a_tail_fold_shows_the_last_lines_and_the_notes_and_counts_the_rest(
    lines: list[str], notes: int
) -> None:
    view = fold_view(lines, "tail", notes)
    notes = min(notes, len(lines))
    output = len(lines) - notes
    if output <= SHORT_LINES:
        assert view is None
        return
    assert view is not None
    assert list(view.lines) == lines[output - TAIL_LINES :]
    assert view.above == output - TAIL_LINES and view.more == 0
    assert view.above + len(view.lines) == len(lines)


@given(st.lists(plain_line, max_size=40))
def test_a_head_fold_shows_the_first_lines_and_counts_the_rest(lines: list[str]) -> None:
    view = fold_view(lines, "head")
    if len(lines) <= SHORT_LINES:
        assert view is None
        return
    assert view is not None
    assert list(view.lines) == lines[:HEAD_LINES] and view.more == len(lines) - HEAD_LINES
