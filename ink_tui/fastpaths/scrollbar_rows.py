"""The transcript's scrollbar drawn again only when its bar looks different.

While an answer streams, every new line changes the transcript's scrollbar (its virtual
size and position grow by one), and Textual renders the whole scrollbar again: its
content through Rich, then each row through the styles cache, some 3 ms a time, half
of what a streaming frame cost (figure 10 in benchmarks/README.md). But the bar is
drawn in eighths of a cell, and once the transcript is long a line moves the thumb by
less than an eighth: most of those renders drew what was there.

Here the scrollbar's rows are kept with what they were drawn from: the bar's segments
(`ScrollBarRender.render_bar`, the pure function the renderer draws with, fed what
`ScrollBar.render` chose: colours for hover or grab, sizes, position), the widget's size,
its background and visual style, and the app's colour filters and theme. While all of
those are equal the kept rows are handed out. When only the bar's segments differ from
the newest kept bar's, only the rows whose segment differs are drawn (through the stock
styles cache, one row each); any other difference renders the stock way.

A scroll by the terminal (`terminal_scroll`) moves the scrollbar's column with the
transcript's rows, so the scrollbar is asked to draw itself whole after each, and a
streamed line was 38 rows through the compositor for the two or three that differ (the
thumb's edge, the row brought in). So when the whole bar is asked for, only the rows
unlike what the terminal shows there (once that scroll is written) are handed to the
compositor: what it shows is `terminal_scroll.shown`, the memory of `frame_diff`. Rows
it does not know are drawn; without that memory, all of them.

Touches: `ScrollBar.render` (public) returning a `ScrollBarRender` with its
`virtual_size`, `window_size`, `position`, `thickness`, `vertical` and `style`
attributes, `ScrollBarRender.render_bar`, `ScrollBar.render_lines` and
`Widget._exchange_repaint_regions` (the rows the compositor is to draw, which
`Compositor.update_widgets` takes; both replaced on the transcript's own scrollbar, as
attributes of that instance), and `Compositor.visible_widgets`. `check()` looks at each.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Collection, Hashable
from types import MethodType
from weakref import WeakKeyDictionary

from rich.color import Color
from rich.console import Console
from rich.segment import Segment
from textual._compositor import Compositor
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget

from ink_tui.fastpaths.compositor_rows import row_runs
from ink_tui.fastpaths.terminal_scroll import shown as terminal_shows

_BAR_ATTRIBUTES = ("virtual_size", "window_size", "position", "thickness", "vertical", "style")
_ADOPTED = "_ink_scrollbar_rows"


def check() -> str | None:
    if ScrollBar.render_lines is not Widget.render_lines:
        return "ScrollBar has a render_lines of its own"
    render_bar = getattr(ScrollBarRender, "render_bar", None)
    if render_bar is None:
        return "ScrollBarRender has no render_bar"
    params = tuple(inspect.signature(render_bar).parameters)
    wanted = (
        "size",
        "virtual_size",
        "window_size",
        "position",
        "thickness",
        "vertical",
        "back_color",
        "bar_color",
    )
    if params != wanted:
        return f"ScrollBarRender.render_bar takes {params}"
    init_names = ScrollBarRender.__init__.__code__.co_names
    missing = [name for name in _BAR_ATTRIBUTES if name not in init_names]
    if missing:
        return f"ScrollBarRender no longer keeps {missing}"
    exchange = Widget.__dict__.get("_exchange_repaint_regions")
    if exchange is None or tuple(inspect.signature(exchange).parameters) != ("self",):
        return "Widget has no _exchange_repaint_regions(self)"
    if "_exchange_repaint_regions" not in Compositor.update_widgets.__code__.co_names:
        return "Compositor.update_widgets no longer takes _exchange_repaint_regions"
    if not isinstance(getattr(Compositor, "visible_widgets", None), property):
        return "Compositor.visible_widgets is not a property"
    return None


# Bars kept per scrollbar: a new line can draw a bar between two others (the size grown,
# the position not yet), and the next frame goes back to the last.
KEPT_BARS = 4
_kept: WeakKeyDictionary[ScrollBar, dict[Hashable, list[Strip]]] = WeakKeyDictionary()
_console = Console(width=1, height=1, color_system="truecolor", legacy_windows=False)
# Per scrollbar: what else (than segments) its last full render was drawn from, when its
# content rows were the ones `_content_row` builds; only then are rows drawn one by one.
_verified: WeakKeyDictionary[ScrollBar, Hashable] = WeakKeyDictionary()
# Per scrollbar, while rows are drawn one by one: the bar's segments they are drawn from.
_content: WeakKeyDictionary[ScrollBar, tuple[Segment, ...]] = WeakKeyDictionary()
# Per scrollbar, until the end of the loop's turn: the rows `_exchange` compared with
# the screen, for the compositor's drawing of them.
_fresh: WeakKeyDictionary[ScrollBar, list[Strip]] = WeakKeyDictionary()


def adopt(scrollbar: ScrollBar) -> None:
    """Keep `scrollbar`'s rows while its bar looks the same; idempotent."""
    if not getattr(scrollbar, _ADOPTED, False):
        scrollbar.render_lines = MethodType(_render_lines, scrollbar)  # type: ignore[method-assign]
        scrollbar.render_line = MethodType(_render_line, scrollbar)  # type: ignore[method-assign]
        scrollbar._exchange_repaint_regions = MethodType(_exchange, scrollbar)  # type: ignore[method-assign]
        setattr(scrollbar, _ADOPTED, True)


def drawn_from(scrollbar: ScrollBar) -> Hashable | None:
    """Everything the scrollbar's rows are drawn from, or None when unsure."""
    renderable = scrollbar.render()
    if type(renderable) is not ScrollBarRender or scrollbar.BLANK:
        return None
    bar = renderable
    style = _console.get_style(bar.style)
    width, height = scrollbar.size
    segments = bar.render_bar(
        size=height if bar.vertical else width,
        virtual_size=bar.virtual_size,
        window_size=bar.window_size,
        position=bar.position,
        thickness=width if bar.vertical else height,
        vertical=bar.vertical,
        back_color=style.bgcolor or Color.parse("#555555"),
        bar_color=style.color or Color.parse("bright_magenta"),
    )
    app = scrollbar.app
    return (
        tuple(segments.segments),
        segments.new_lines,
        scrollbar.size,
        scrollbar.background_colors,
        scrollbar.visual_style,
        scrollbar.opacity,
        tuple(map(id, scrollbar.get_line_filters())),
        id(app.ansi_theme),
        app.native_ansi_color,
    )


def _render_lines(scrollbar: ScrollBar, crop: Region) -> list[Strip]:
    fresh = _fresh.get(scrollbar)
    if fresh is not None:
        return _cropped(scrollbar, fresh, crop)
    try:
        key = drawn_from(scrollbar)
    except (AttributeError, TypeError, ValueError):  # not what check() saw: the stock way
        key = None
    kept = _kept.setdefault(scrollbar, {})
    whole = None if key is None else kept.pop(key, None)
    if whole is None and key is not None and kept:
        whole = _from_newest(scrollbar, key, kept)
    if whole is None:
        whole = Widget.render_lines(scrollbar, scrollbar.size.region)
        _verify(scrollbar, key)
    if key is None:
        kept.clear()
    else:
        kept[key] = whole  # the newest last
        while len(kept) > KEPT_BARS:
            del kept[next(iter(kept))]
    return _cropped(scrollbar, whole, crop)


def _cropped(scrollbar: ScrollBar, whole: list[Strip], crop: Region) -> list[Strip]:
    rows = whole[crop.y : crop.bottom]
    if crop.x == 0 and crop.width == scrollbar.size.width:
        return rows
    return [strip.crop(crop.x, crop.right) for strip in rows]


def _from_newest(
    scrollbar: ScrollBar, key: Hashable, kept: dict[Hashable, list[Strip]]
) -> list[Strip] | None:
    """The newest kept rows with only the rows whose bar segment differs drawn again.

    A vertical bar is one segment a row, and a row's strip follows from its segment and
    what else the key holds (size, colours, filters, theme): when only segments differ,
    the rows whose segment is the same are the same. When the thumb moves by an eighth
    that is one or two rows of the whole height. None when more than segments differ.
    """
    newest_key = next(reversed(kept))
    if not (isinstance(key, tuple) and isinstance(newest_key, tuple)):
        return None
    segments, new_lines, *rest = key
    old_segments, old_new_lines, *old_rest = newest_key
    height = scrollbar.size.height
    verified = _verified.get(scrollbar)
    if not new_lines or not old_new_lines or rest != old_rest or verified != tuple(rest):
        return None
    if not len(segments) == len(old_segments) == height:
        return None
    rows = list(kept[newest_key])
    width = scrollbar.size.width
    # Textual's styles cache draws only the rows asked for, from `render_line`: given
    # the content rows built here, not a render of the whole bar through Rich.
    _content[scrollbar] = segments
    try:
        for y in range(height):
            if segments[y] != old_segments[y]:
                rows[y] = Widget.render_lines(scrollbar, Region(0, y, width, 1))[0]
    finally:
        del _content[scrollbar]
    return rows


def _content_row(scrollbar: ScrollBar, segment: Segment) -> Strip:
    """A vertical bar's content row as Textual renders it: the row's segment under the
    widget's own style (what `post_render` wraps the bar in)."""
    base = scrollbar.visual_style.rich_style
    return Strip([Segment(segment.text, base + segment.style)], scrollbar.size.width)


def _render_line(scrollbar: ScrollBar, y: int) -> Strip:
    segments = _content.get(scrollbar)
    if segments is None:
        return Widget.render_line(scrollbar, y)
    return _content_row(scrollbar, segments[y])


def _verify(scrollbar: ScrollBar, key: Hashable | None) -> None:
    """After a full render the stock way: are its content rows the ones `_content_row`
    builds? Only then, and while nothing but the segments changes, rows are drawn one by
    one. Reads the widget's render cache (`_render_cache.lines`); without it, never."""
    _verified.pop(scrollbar, None)
    if not isinstance(key, tuple) or not key[1]:
        return
    segments, _, *rest = key
    cache = getattr(scrollbar, "_render_cache", None)
    stock = getattr(cache, "lines", None)
    if not isinstance(stock, list) or len(stock) != len(segments):
        return
    if stock == [_content_row(scrollbar, segment) for segment in segments]:
        _verified[scrollbar] = tuple(rest)


def _exchange(scrollbar: ScrollBar) -> Collection[Region]:
    """The regions the compositor is to draw: asked for whole, only the rows unlike
    what the terminal shows there."""
    regions = Widget._exchange_repaint_regions(scrollbar)
    try:
        rows = _unlike_screen(scrollbar, regions)
    except (AttributeError, KeyError, TypeError, ValueError):  # not what check() saw
        return regions
    if rows is None:
        return regions
    width = scrollbar.size.width
    return [Region(0, first, width, count) for first, count in row_runs(rows)]


def _unlike_screen(scrollbar: ScrollBar, regions: Collection[Region]) -> list[int] | None:
    """The rows whose strip differs from the terminal's there; None when unsure."""
    whole = scrollbar.size.region
    if whole not in regions or scrollbar.outer_size != scrollbar.size:
        return None
    placed = scrollbar.screen._compositor.visible_widgets.get(scrollbar)
    if placed is None:
        return None
    region, clip = placed
    if not clip.contains_region(region) or region.size != scrollbar.size:
        return None
    shown = terminal_shows(scrollbar, region)
    if shown is None:
        return None
    drawn = scrollbar.render_lines(whole)
    # The compositor draws the rows handed to it within this turn of the loop, with
    # nothing run in between that could change the bar: it is given these, not drawn
    # from again.
    _fresh[scrollbar] = drawn
    asyncio.get_running_loop().call_soon(_fresh.pop, scrollbar, None)
    return [y for y, (old, new) in enumerate(zip(shown, drawn, strict=True)) if old != new]
