"""Textual's styles cache for the transcript, giving a row it framed before back as is.

Touches: `textual._styles_cache.StylesCache` (private), subclassed with its
`render_line` of 13 arguments (8.2.7 added `native_ansi`), and the widget's private
`_styles_cache` attribute that the transcript replaces. `check()` compares both with
what this was written for; refused, the transcript keeps Textual's own cache.

Textual frames every content line of a widget (padding, background, borders) into a new
strip each time the widget is refreshed, and a scroll refreshes the whole transcript; the
app's line filter then makes a copy of each, and the compositor cuts each copy again. A
page scrolled back to was 3 new strips per row. Here a row whose content is the very
strip framed before (the transcript keeps its rows, see `PlacedRows`) gets the same framed
strip back, so the filtered and cut copies are found in that strip's own caches too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.terminal_theme import TerminalTheme
from textual._styles_cache import StylesCache
from textual.color import Color
from textual.geometry import Size, Spacing
from textual.strip import Strip
from textual.widget import Widget

# `StylesCache.render_line`'s parameters as this subclass overrides them.
RENDER_LINE_PARAMETERS = (
    "self",
    "styles",
    "y",
    "size",
    "content_size",
    "padding",
    "base_background",
    "background",
    "render_content_line",
    "border_title",
    "border_subtitle",
    "opacity",
    "ansi_theme",
    "native_ansi",
)


def check() -> str | None:
    import inspect

    found = tuple(inspect.signature(StylesCache.render_line).parameters)
    if found != RENDER_LINE_PARAMETERS:
        return f"StylesCache.render_line takes {found[1:]}, not {RENDER_LINE_PARAMETERS[1:]}"
    for method in ("clear", "render", "render_widget"):
        if not callable(getattr(StylesCache, method, None)):
            return f"StylesCache has no {method}()"
    if "_styles_cache" not in Widget.__init__.__code__.co_names:
        return "Widget.__init__ no longer sets _styles_cache"
    return None


class KeptRowsStylesCache(StylesCache):
    @classmethod
    def install(cls, widget: Widget, limit: int) -> KeptRowsStylesCache:
        """In place of `widget`'s own styles cache (Textual's private attribute)."""
        cache = cls(limit)
        widget._styles_cache = cache
        return cache

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._limit = limit
        # id(content strip) -> (that strip, what else the frame depends on, whether on
        # the first or last row, the framed strip)
        self._framed: dict[int, tuple[Strip, tuple[Any, ...], bool, Strip]] = {}
        self._key: tuple[Any, ...] = ()

    def set_limit(self, limit: int) -> None:
        """Keep at most `limit` framed rows from now on (as many as the rows placed)."""
        self._limit = max(1, limit)
        while len(self._framed) > self._limit:
            del self._framed[next(iter(self._framed))]

    def forget(self) -> None:
        """The widget's styles changed (tint, opacity, borders...): frame every row anew.

        Not `clear`: Textual clears this cache on every refresh, which is what a scroll is.
        """
        self._framed.clear()

    def render_line(
        self,
        styles: Any,
        y: int,
        size: Size,
        content_size: Size,
        padding: Spacing,
        base_background: Color,
        background: Color,
        render_content_line: Callable[[int], Strip],
        border_title: Any,
        border_subtitle: Any,
        opacity: float,
        ansi_theme: TerminalTheme,
        native_ansi: bool,
    ) -> Strip:
        content_y = y - styles.gutter.top
        key = self._key
        if border_title is not None or border_subtitle is not None:
            line_of: Callable[[int], Strip] = render_content_line
            content = None
        elif 0 <= content_y < content_size.height:
            content = render_content_line(content_y)
            # What else the frame depends on: the same objects for every row of a frame,
            # so one key per frame, not a tuple per row.
            if not (
                key
                and key[0] is size
                and key[1] is content_size
                and key[2] is padding
                and key[3] is base_background
                and key[4] is background
                and key[5] == opacity
                and key[6] is ansi_theme
                and key[7] == native_ansi
            ):
                key = self._key = (
                    size,
                    content_size,
                    padding,
                    base_background,
                    background,
                    opacity,
                    ansi_theme,
                    native_ansi,
                )
            # Outlines are drawn over the first and last rows.
            edge = y == 0 or y == size.height - 1
            kept = self._framed.pop(id(content), None)
            if kept is not None and kept[0] is content and kept[2] == edge and kept[1] == key:
                # Back in at the end: least recently drawn goes first (see PlacedRows).
                self._framed[id(content)] = kept
                return kept[3]
            line_of = _constant(content)
        else:
            line_of = render_content_line
            content = None
        strip = super().render_line(
            styles,
            y,
            size,
            content_size,
            padding,
            base_background,
            background,
            line_of,
            border_title,
            border_subtitle,
            opacity,
            ansi_theme,
            native_ansi,
        )
        if content is not None:
            framed = self._framed
            if len(framed) >= self._limit:
                del framed[next(iter(framed))]
            framed[id(content)] = (content, key, edge, strip)
        return strip


def _constant(strip: Strip) -> Callable[[int], Strip]:
    return lambda _y: strip
