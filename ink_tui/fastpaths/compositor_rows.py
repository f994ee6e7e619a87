"""A partial frame renders each widget only on the rows it writes there.

Textual's partial frame (`Compositor.render_partial_update`) takes the union of the
regions asked for, then renders every widget that overlaps it over the widget's whole
visible height, and writes only the asked-for spans of the result. While an answer
streams, the transcript's last row, the activity panel's spinner and the status bar
are asked for in one frame: the union spans the screen, so the transcript (every row),
its scrollbar, the input and the screen behind them were all rendered again, some 30
times a second, to write a row or two (figure 10 in benchmarks/README.md).

Here a widget is rendered only on rows where a span asked for meets one of its cuts
that nothing in front of it has filled yet (the compositor fills a frame front to back,
and the first strip for a cut wins), in runs of adjacent rows. What the frame writes is
the same: a cut left empty is one no span reaches, and those were rendered and thrown
away before. A widget's lines not rendered stay marked for drawing in its styles cache,
so nothing is served stale later.

Touches: `Compositor.render_partial_update` (replaced on the compositor of ink's
screens, as an attribute of that instance: Textual's other screens keep the stock one),
its `_dirty_regions`, `_regions_to_spans`, `cuts` and `visible_widgets`, and
`ChopsUpdate(chops, spans, chop_ends)`. `check()` looks at each, and that the stock
method still does what this one was written against.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from types import MethodType

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip

_ADOPTED = "_ink_compositor_rows"


def check() -> str | None:
    stock = Compositor.__dict__.get("render_partial_update")
    if stock is None:
        return "Compositor has no render_partial_update"
    if tuple(inspect.signature(stock).parameters) != ("self",):
        return "Compositor.render_partial_update takes arguments"
    names = set(stock.__code__.co_names)
    wanted = {"_dirty_regions", "_regions_to_spans", "_render_chops", "cuts", "ChopsUpdate"}
    if not wanted <= names:
        return f"Compositor.render_partial_update no longer uses {sorted(wanted - names)}"
    chops = Compositor.__dict__.get("_render_chops")
    if chops is None or "_get_renders" not in chops.__code__.co_names:
        return "Compositor._render_chops no longer renders through _get_renders"
    for name in ("cuts", "visible_widgets"):
        if not isinstance(getattr(Compositor, name, None), property):
            return f"Compositor.{name} is not a property"
    if not callable(getattr(Compositor, "_regions_to_spans", None)):
        return "Compositor has no _regions_to_spans"
    if "_dirty_regions" not in Compositor.__init__.__code__.co_names:
        return "Compositor.__init__ no longer sets _dirty_regions"
    params = tuple(inspect.signature(ChopsUpdate.__init__).parameters)
    if params != ("self", "chops", "spans", "chop_ends"):
        return f"ChopsUpdate takes {params}"
    return None


def adopt(screen: Screen[object]) -> None:
    """Have `screen`'s compositor render partial frames row by row; idempotent."""
    compositor = screen._compositor
    if not getattr(compositor, _ADOPTED, False):
        compositor.render_partial_update = MethodType(render_partial_update, compositor)  # type: ignore[method-assign]
        setattr(compositor, _ADOPTED, True)


def render_partial_update(compositor: Compositor) -> ChopsUpdate | None:
    """`Compositor.render_partial_update`, rendering only the rows it writes."""
    regions = compositor._dirty_regions.copy()
    compositor._dirty_regions.clear()
    if not regions:
        return None
    spans = list(compositor._regions_to_spans(regions))
    cuts = compositor.cuts
    chops = render_rows(compositor, cuts, spans)
    return ChopsUpdate(chops, spans, [cut_set[1:] for cut_set in cuts])


def render_rows(
    compositor: Compositor, cuts: list[list[int]], spans: list[tuple[int, int, int]]
) -> list[dict[int, Strip | None]]:
    """The frame's chops (per row, a strip per cut), filled only where a span needs them."""
    chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
    wanted: dict[int, list[tuple[int, int]]] = {}
    for y, x1, x2 in spans:
        wanted.setdefault(y, []).append((x1, x2))
    height = len(cuts)
    for widget, (region, clip) in compositor.visible_widgets.items():
        left, top, width, rows_high = region.intersection(clip)
        if not width or not rows_high:
            continue
        right = left + width
        rows = [
            y
            for y in range(top, min(top + rows_high, height))
            if y in wanted and _needed(cuts[y], chops[y], wanted[y], left, right)
        ]
        for first, count in row_runs(rows):
            crop = Region(left - region.x, first - region.y, width, count)
            strips = widget.render_lines(crop)
            for y, strip in zip(range(first, first + count), strips, strict=False):
                _fill(chops[y], cuts[y], strip, left, right)
    return chops


def _needed(
    row_cuts: Sequence[int],
    line: dict[int, Strip | None],
    spans: list[tuple[int, int]],
    left: int,
    right: int,
) -> bool:
    """Some cut of the widget on this row is still empty and a span written reaches it."""
    for index in range(len(row_cuts) - 1):
        cut = row_cuts[index]
        if cut < left:
            continue
        if cut >= right:
            return False
        if line[cut] is not None:
            continue
        end = row_cuts[index + 1]
        for x1, x2 in spans:
            if cut < x2 and end > x1:
                return True
    return False


def _fill(
    line: dict[int, Strip | None], row_cuts: Sequence[int], strip: Strip, left: int, right: int
) -> None:
    """The widget's strip divided at the row's cuts, into the cuts still empty (as
    `Compositor._render_chops` fills them)."""
    line_cuts = [cut for cut in row_cuts if right >= cut >= left]
    pieces = strip.divide([cut - left for cut in line_cuts[1:]])
    for cut, piece in zip(line_cuts, pieces, strict=False):
        if line.get(cut) is None:
            line[cut] = piece


def row_runs(rows: list[int]) -> Iterator[tuple[int, int]]:
    """(first row, count) of each run of adjacent rows in ascending `rows`."""
    if not rows:
        return
    first = previous = rows[0]
    for row in rows[1:]:
        if row != previous + 1:
            yield first, previous - first + 1
            first = row
        previous = row
    yield first, previous - first + 1
