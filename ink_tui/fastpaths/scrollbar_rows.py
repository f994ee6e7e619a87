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
those are equal the kept rows are handed out; any difference renders the stock way.

Touches: `ScrollBar.render` (public) returning a `ScrollBarRender` with its
`virtual_size`, `window_size`, `position`, `thickness`, `vertical` and `style`
attributes, `ScrollBarRender.render_bar` and `ScrollBar.render_lines` (replaced on the
transcript's own scrollbar, as an attribute of that instance). `check()` looks at each.
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable
from types import MethodType
from weakref import WeakKeyDictionary

from rich.color import Color
from rich.console import Console
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget

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
    return None


# Bars kept per scrollbar: a new line can draw a bar between two others (the size grown,
# the position not yet), and the next frame goes back to the last.
KEPT_BARS = 4
_kept: WeakKeyDictionary[ScrollBar, dict[Hashable, list[Strip]]] = WeakKeyDictionary()
_console = Console(width=1, height=1, color_system="truecolor", legacy_windows=False)


def adopt(scrollbar: ScrollBar) -> None:
    """Keep `scrollbar`'s rows while its bar looks the same; idempotent."""
    if not getattr(scrollbar, _ADOPTED, False):
        scrollbar.render_lines = MethodType(_render_lines, scrollbar)  # type: ignore[method-assign]
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
    try:
        key = drawn_from(scrollbar)
    except (AttributeError, TypeError, ValueError):  # not what check() saw: the stock way
        key = None
    kept = _kept.setdefault(scrollbar, {})
    whole = None if key is None else kept.pop(key, None)
    if whole is None:
        whole = Widget.render_lines(scrollbar, scrollbar.size.region)
    if key is None:
        kept.clear()
    else:
        kept[key] = whole  # the newest last
        while len(kept) > KEPT_BARS:
            del kept[next(iter(kept))]
    rows = whole[crop.y : crop.bottom]
    if crop.x == 0 and crop.width == scrollbar.size.width:
        return rows
    return [strip.crop(crop.x, crop.right) for strip in rows]
