"""The compact-layout policy and the line fitter, without a screen."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text

from ink_tui.ui.compact_layout import (
    MIN_TRANSCRIPT_ROWS,
    Layout,
    Showing,
    plan_layout,
)
from ink_tui.ui.fit_text import ELLIPSIS, Part, elide, fit_parts
from ink_tui.ui.widgets.too_small import MIN_HEIGHT

ORDER = [
    Layout(),
    Layout(activity="compact"),
    Layout(activity="compact", queue="compact"),
    Layout(activity="compact", queue="compact", question="compact"),
]


def test_a_tall_terminal_keeps_every_panel_in_full() -> None:
    assert plan_layout(50, Showing(activity=4, queue=4, question=12)) == Layout()


def test_60x20_with_a_question_and_two_queued_entries_compacts_in_order() -> None:
    showing = Showing(activity=3, queue=4, question=9)
    layout = plan_layout(20, showing)
    assert layout.activity == "compact" and layout.queue == "compact"
    assert 20 - showing.fixed - layout.rows(showing) >= MIN_TRANSCRIPT_ROWS


def test_the_activity_panel_gives_way_first() -> None:
    assert plan_layout(16, Showing(activity=8)) == Layout(activity="compact")
    assert plan_layout(20, Showing(activity=8)) == Layout()
    assert plan_layout(16, Showing(queue=10)) == Layout(activity="compact", queue="compact")


sizes = st.integers(min_value=0, max_value=30)


@given(
    height=st.integers(min_value=MIN_HEIGHT, max_value=80),
    activity=st.integers(min_value=0, max_value=8),
    queue=st.integers(min_value=0, max_value=10),
    question=st.integers(min_value=0, max_value=22),
    fixed=st.integers(min_value=5, max_value=7),
)
def test_the_transcript_keeps_its_rows_and_nothing_gives_way_for_nothing(
    height: int, activity: int, queue: int, question: int, fixed: int
) -> None:
    showing = Showing(activity, queue, question, fixed)
    layout = plan_layout(height, showing)
    left = height - fixed - layout.rows(showing)
    # Every panel's compact form leaves the transcript its rows at the minimum size.
    assert left >= MIN_TRANSCRIPT_ROWS
    # The least compact layout that does: the one before it in the order does not.
    step = ORDER.index(layout)
    if step:
        before = ORDER[step - 1]
        assert height - fixed - before.rows(showing) < MIN_TRANSCRIPT_ROWS


@given(height=st.integers(min_value=0, max_value=80), a=sizes, q=sizes, u=sizes)
def test_more_room_never_means_more_compact(height: int, a: int, q: int, u: int) -> None:
    showing = Showing(a, q, u)
    assert ORDER.index(plan_layout(height + 1, showing)) <= ORDER.index(
        plan_layout(height, showing)
    )


words = st.text(alphabet="abcdefghij+/Ctrl", min_size=1, max_size=12)
phrases = st.lists(words, min_size=1, max_size=6).map(" ".join)


def whole_or_elided(fitted: str, source_words: set[str]) -> bool:
    """Every word of `fitted` is a word of the source, or the last one, ending in "…"
    (cut at a word boundary, or inside a single word that alone is too long)."""
    pieces = fitted.split()
    for index, piece in enumerate(pieces):
        if piece in source_words or piece in ("·",):
            continue
        if index == len(pieces) - 1 and piece.endswith(ELLIPSIS):
            head = piece[: -len(ELLIPSIS)]
            if head == "" or head in source_words or any(w.startswith(head) for w in source_words):
                continue
        return False
    return True


@given(
    st.lists(st.tuples(phrases, st.integers(-5, 5)), min_size=1, max_size=6), st.integers(0, 120)
)
def test_fitted_parts_never_exceed_the_width_nor_cut_a_word_unmarked(
    parts: list[tuple[str, int]], width: int
) -> None:
    fitted = fit_parts([Part(Text(text), priority) for text, priority in parts], width)
    assert fitted.cell_len <= width
    source = {word for text, _ in parts for word in text.split()}
    assert whole_or_elided(fitted.plain, source)
    # What fits whole is shown whole.
    whole = "  ·  ".join(text for text, _ in parts)
    if len(whole) <= width:
        assert fitted.plain == whole


@given(phrases, st.integers(0, 60))
def test_elide_cuts_at_a_word_boundary(text: str, width: int) -> None:
    cut = elide(Text(text), width)
    assert cut.cell_len <= width
    if len(text) <= width:
        assert cut.plain == text
    elif width > 1 and " " in text[: width - 1]:
        # Whole words, then the ellipsis.
        assert cut.plain.endswith(ELLIPSIS)
        assert text.startswith(cut.plain[:-1].rstrip())
        assert all(word in text.split() for word in cut.plain[:-1].split())


def test_the_least_important_part_goes_first() -> None:
    parts = [Part(Text("running 3s"), 9), Part(Text("↑1.2k ↓300"), 1), Part(Text("~/shop"), 3)]
    assert fit_parts(parts, 22).plain == "running 3s  ·  ~/shop"
    assert fit_parts(parts, 12).plain == "running 3s"
    assert fit_parts(parts, 8).plain == "running…"
