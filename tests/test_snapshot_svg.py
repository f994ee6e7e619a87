"""tests/snapshot_svg: the same cells cut into other spans compare equal; any change in
a cell's character, colour or style does not."""

from __future__ import annotations

from tests.snapshot_svg import merged_runs


def rect(fill: str, x: str, w: str) -> str:
    return (
        f'<rect fill="{fill}" x="{x}" y="416.3" width="{w}" height="24.65" '
        'shape-rendering="crispEdges"/>'
    )


def text(cls: str, x: str, w: str, body: str) -> str:
    return (
        f'<text class="{cls}" x="{x}" y="20" textLength="{w}" '
        f'clip-path="url(#terminal-line-0)">{body}</text>'
    )


ONE_SPAN = rect("#121212", "0", "12.2") + rect("#121212", "12.2", "1183.4")
THREE_SPANS = (
    rect("#121212", "0", "12.2")
    + rect("#121212", "12.2", "24.4")
    + rect("#121212", "36.6", "1146.8")
    + rect("#121212", "1183.4", "12.2")
)


def test_one_row_cut_two_ways_is_one_picture() -> None:
    assert merged_runs(ONE_SPAN) == merged_runs(THREE_SPANS)
    cut = text("r1", "0", "24.4", "ab") + text("r1", "24.4", "12.2", "c")
    assert merged_runs(cut) == merged_runs(text("r1", "0", "36.6", "abc"))


def test_a_colour_a_character_or_a_style_still_differs() -> None:
    other_colour = THREE_SPANS.replace('fill="#121212" x="36.6"', 'fill="#1a1a1a" x="36.6"')
    assert merged_runs(other_colour) != merged_runs(ONE_SPAN)
    assert merged_runs(text("r1", "0", "36.6", "abc")) != merged_runs(
        text("r1", "0", "36.6", "abd")
    )
    styled = text("r1", "0", "24.4", "ab") + text("r2", "24.4", "12.2", "c")
    assert merged_runs(styled) != merged_runs(text("r1", "0", "36.6", "abc"))


def test_spans_that_do_not_meet_stay_apart() -> None:
    gap = rect("#121212", "0", "12.2") + rect("#121212", "24.4", "12.2")
    assert merged_runs(gap) == gap
