"""Rows the terminal moves itself: a scroll region, not every row of the transcript drawn again.

When a transcript that follows the answer moves up by a line, Textual draws every row of
it again (a scroll is a repaint of the widget). A terminal can move rows itself: a scroll
region (DECSTBM, `CSI top;bottom r`), a line feed on its last row (or a reverse index,
`ESC M`, on its first) for each row to move, then `CSI r` to give the whole screen back.
Then only the rows that came in (and any that changed) need drawing. These are VT100's
own, which every terminal in use has (xterm and its kin, tmux, screen, VTE, kitty,
iTerm2, Windows Terminal, the Linux console).

The scroll must reach the terminal before anything is drawn in those rows after it was
arranged, and only when what is on the screen there is what the transcript drew last: so
`arrange` holds it back for the next frame of the widget's screen, and ink's App's
`_display` (wrapped by `install`) writes it at the head of that frame, inside the same
synchronized update. That frame has the rows it brings in, unless Textual takes the
transcript's refresh a frame later (the scrollbar's came first): then they follow in the
next, and what the first drew in those rows (the scrollbar) is not moved by it.
`arrange` refuses, and the caller draws the whole view, when: the screen is not the one
shown, the app runs inline or headless, the widget does not span the terminal's width
(the region moves whole rows), anything else is drawn over those rows (a toast, a menu,
a tooltip), or rows the widget asked for are not drawn yet.

Textual also writes a row it was asked to draw from a column on from the row's start
(a `ChopsUpdate` crops where a run ends, not where it begins), so a line that grew by a
word was written whole; the frames it writes here begin where the run begins.

Touches: `App._display(screen, renderable)` (private; wrapped on ink's App class only,
not on Textual's), `textual._compositor.CompositorUpdate.render_segments`,
`ChopsUpdate`'s `chops`, `spans` and `chop_ends`, `Screen._compositor.visible_widgets`,
and a widget's private `_repaint_regions` (rows asked for and not yet drawn) and
`_styles_cache.clear()` (its rows kept by position, which a scroll makes wrong).
`check()` looks for each; refused, nothing is wrapped and `arrange` always says no.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from rich.cells import cell_len
from rich.console import Console
from rich.control import Control
from textual._compositor import ChopsUpdate, Compositor, CompositorUpdate
from textual.app import App
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarCorner
from textual.strip import Strip
from textual.widget import Widget

from ink_tui.fastpaths.frame_diff import ScreenMemory

_WRAPPED = "_ink_terminal_scroll"


def check() -> str | None:
    display = App.__dict__.get("_display")
    if display is None:
        return "App has no _display"
    found = tuple(inspect.signature(display).parameters)
    if found != ("self", "screen", "renderable"):
        return f"App._display takes {found}"
    names = display.__code__.co_names
    if "render_segments" not in names or "_batch_count" not in names:
        return "App._display no longer writes a CompositorUpdate's render_segments"
    if not callable(getattr(CompositorUpdate, "render_segments", None)):
        return "CompositorUpdate has no render_segments"
    chops_init = ChopsUpdate.__init__
    if tuple(inspect.signature(chops_init).parameters) != ("self", "chops", "spans", "chop_ends"):
        return "ChopsUpdate is not ChopsUpdate(chops, spans, chop_ends)"
    if not {"chops", "spans", "chop_ends"} <= set(chops_init.__code__.co_names):
        return "ChopsUpdate no longer keeps chops, spans and chop_ends"
    if not isinstance(getattr(Compositor, "visible_widgets", None), property):
        return "Compositor.visible_widgets is not a property"
    init_names = Widget.__init__.__code__.co_names
    for attribute in ("_repaint_regions", "_styles_cache"):
        if attribute not in init_names:
            return f"Widget.__init__ no longer sets {attribute}"
    return None


class _Scrolled(CompositorUpdate):
    """A frame with the terminal's scroll written first."""

    def __init__(
        self, prefix: str, update: CompositorUpdate, memory: ScreenMemory | None, band: Band
    ) -> None:
        self.prefix = prefix
        self.update = update
        self.memory = memory
        self.band = band

    def render_segments(self, console: Console) -> str:
        if self.memory is not None:
            self.memory.scrolled(*self.band)
        return self.prefix + self.update.render_segments(console)


class _FromRunStart(CompositorUpdate):
    """A partial frame written from where each run begins (Textual's, from its chop's),
    and with a `memory`, only where it differs from what the terminal shows."""

    def __init__(self, update: ChopsUpdate, memory: ScreenMemory | None) -> None:
        self.update = update
        self.memory = memory

    def render_segments(self, console: Console) -> str:
        update, memory = self.update, self.memory
        chops, chop_ends, spans = update.chops, update.chop_ends, update.spans
        move_to = Control.move_to
        out: list[str] = []
        last_y = spans[-1][0]
        for y, x1, x2 in spans:
            wrote = False
            for end, (x, strip) in zip(chop_ends[y], chops[y].items(), strict=False):
                if strip is None or x > x2 or end <= x1:
                    continue
                if x2 > x >= x1 and end <= x2:
                    start, piece = x, strip
                else:
                    start = x + _whole_cell(strip, x1 - x) if x1 > x else x
                    piece = strip.crop(start - x, min(end, x2) - x)
                if memory is not None:
                    changed = memory.write(y, start, piece)
                    if changed is None:
                        continue
                    start, piece = changed
                out.append(move_to(start, y).segment.text)
                out.append(piece.render(console))
                wrote = True
            if wrote and y != last_y:
                out.append("\n")
        return "".join(out)


def _whole_cell(strip: Strip, cell: int) -> int:
    """`cell`, or the cell before it when a wide character starts there and covers it."""
    at = 0
    for segment in strip:
        length = segment.cell_length
        if at + length <= cell:
            at += length
            continue
        for character in segment.text:
            width = cell_len(character)
            if at + width > cell:
                return at
            at += width
        break
    return cell


Band = tuple[int, int, int]
"""Screen rows `top`..`bottom` (inclusive) moved up by `shift` (down when negative)."""


@dataclass(slots=True)
class _Pending:
    widget: Widget
    sequence: str
    band: Band


# Per app: the scroll waiting for its frame, and what the terminal shows.
_pending: WeakKeyDictionary[App[Any], _Pending] = WeakKeyDictionary()
_memories: WeakKeyDictionary[App[Any], ScreenMemory] = WeakKeyDictionary()


def install(app_class: type[App[Any]], *, remember: bool = False) -> None:
    """Wrap `app_class._display` (ink's App, a subclass: Textual's own stays); idempotent.
    `remember`: frames write only what differs from what the terminal shows
    (`frame_diff`)."""
    if getattr(app_class, _WRAPPED, False):
        return
    original: Callable[[App[Any], Any, Any], None] = app_class._display

    def _display(self: App[Any], screen: Any, renderable: Any) -> None:
        memory = _memory_for(self, screen, renderable) if remember else None
        pending = _pending.get(self)
        if isinstance(renderable, ChopsUpdate) and renderable.spans:
            renderable = _FromRunStart(renderable, memory)
        if pending is not None and renderable is not None:
            renderable = _with_scroll(self, screen, renderable, pending, memory)
        original(self, screen, renderable)

    setattr(app_class, "_display", _display)  # noqa: B010
    setattr(app_class, _WRAPPED, True)


def _memory_for(app: App[Any], screen: Any, renderable: Any) -> ScreenMemory | None:
    """The app's memory of the terminal, if this frame may use it (else forgotten)."""
    if renderable is None:
        return None
    memory = _memories.get(app)
    if memory is None:
        memory = _memories[app] = ScreenMemory()
    if isinstance(renderable, ChopsUpdate) and screen is app.screen and _writes(app):
        memory.frame_of(screen)
        return memory
    memory.forget()  # a whole frame, another screen's, or one not written: unknown
    return None


def _writes(app: App[Any]) -> bool:
    """What `App._display` asks before it writes anything."""
    return bool(
        app._running
        and not app._closed
        and not app.is_headless
        and not app.is_inline
        and app._driver is not None
        and not app._batch_count
    )


def _with_scroll(
    app: App[Any], screen: Any, renderable: Any, pending: _Pending, memory: ScreenMemory | None
) -> Any:
    widget = pending.widget
    if not widget.is_attached:
        del _pending[app]  # gone: what is in its rows now is someone else's
        return renderable
    if screen is not widget.screen:
        return renderable  # another screen's frame: the scroll waits for its own
    if not isinstance(renderable, CompositorUpdate) or not _writes(app):
        # It would not reach the terminal: the widget's rows are drawn again instead.
        del _pending[app]
        widget.refresh()
        return renderable
    del _pending[app]
    if memory is None:
        _forget_memory(app)  # rows moved that a memory could not follow
    return _Scrolled(pending.sequence, renderable, memory, pending.band)


def arrange(widget: Widget, shift: int, band: Region) -> bool:
    """Have the terminal move the screen rows of `band` up by `shift` (down when
    negative) at the head of the widget's next frame. True: arranged, and the widget's
    rows kept by position are forgotten; the caller refreshes the rows that came in (and
    any scrollbar). False: the caller draws every row."""
    app = widget.app
    if not getattr(type(app), _WRAPPED, False) or app in _pending or not _writes(app):
        return False
    screen = widget.screen
    if screen is not app.screen or widget._repaint_regions or not shift or not band:
        return False
    if not _alone_in(widget, band):
        return False
    top, bottom = band.y, band.bottom - 1
    _pending[app] = _Pending(widget, scroll_sequence(top, bottom, shift), (top, bottom, shift))
    widget._styles_cache.clear()
    return True


def shown(widget: Widget, cells: Region) -> list[Strip | None] | None:
    """What the terminal shows in screen `cells`, row by row, once the scroll waiting
    for the next frame is written: each row's strip if exactly those cells were last
    written as one piece, else None. None when the terminal's content is not followed
    (`frame_diff` off, a frame not written, another screen shown)."""
    app = widget.app
    memory = _memories.get(app)
    screen = app.screen
    if memory is None or not memory.shows(screen) or widget.screen is not screen:
        return None
    if not _writes(app):
        return None
    pending = _pending.get(app)
    band = None if pending is None or pending.widget.screen is not screen else pending.band
    rows: list[Strip | None] = []
    for y in range(cells.y, cells.bottom):
        source = y
        if band is not None and band[0] <= y <= band[1]:
            source = y + band[2]
            if not band[0] <= source <= band[1]:
                rows.append(None)  # brought in by the scroll: blank, not drawn yet
                continue
        rows.append(memory.piece(source, cells.x, cells.right))
    return rows


def scroll_sequence(top: int, bottom: int, shift: int) -> str:
    """Screen rows `top`..`bottom` (0-based, inclusive) moved up by `shift` (down when
    negative); the cursor is left anywhere (a frame places it before each run it draws)."""
    region = f"\x1b[{top + 1};{bottom + 1}r"
    if shift > 0:
        move = f"\x1b[{bottom + 1};1H" + "\n" * shift
    else:
        move = f"\x1b[{top + 1};1H" + "\x1bM" * -shift
    return f"{region}{move}\x1b[r"


def _alone_in(widget: Widget, band: Region) -> bool:
    """The widget spans the screen's width in `band`, and nothing else is drawn there
    but what lies behind it and its own scrollbars."""
    screen = widget.screen
    visible = screen._compositor.visible_widgets
    placed = visible.get(widget)
    if placed is None:
        return False
    region, clip = placed
    if region.x != 0 or region.right != screen.size.width or not clip.contains_region(band):
        return False
    behind = set(widget.ancestors)
    rows = Region(0, band.y, screen.size.width, band.height)
    for other, (other_region, other_clip) in visible.items():
        if other is widget or other in behind:
            continue
        if other.parent is widget and isinstance(other, ScrollBar | ScrollBarCorner):
            continue
        if other_region.intersection(other_clip).overlaps(rows):
            return False
    return True


def forget(app: App[Any]) -> None:
    """Drop a scroll still waiting and what the terminal showed (tests, an app closing)."""
    _pending.pop(app, None)
    _forget_memory(app)


def _forget_memory(app: App[Any]) -> None:
    memory = _memories.get(app)
    if memory is not None:
        memory.forget()
