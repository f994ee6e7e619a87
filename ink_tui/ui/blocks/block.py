"""What every transcript block is: plain data that draws itself as lines of a given width.

Blocks are not widgets. The transcript (a line-API `ScrollView`) holds them in a list,
asks each for its lines at the current width and caches them, so a session of thousands
of messages costs one widget, and appending a block never lays out the others again.

A block says it changed by bumping `version`; the transcript redraws it on the next
frame. Styles come from the transcript's component classes (through `Look`), so colours
stay in CSS and follow the theme.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip


@dataclass(frozen=True, slots=True)
class Look:
    """What a block needs to draw itself: the console, theme styles and view options."""

    console: Console
    # Component class name (without the "transcript--" prefix) -> rich style.
    style: Callable[[str], Style]
    dark: bool = True
    show_thinking: bool = True


class Block:
    """One entry of the transcript."""

    def __init__(self) -> None:
        # Bumped on every change of what the block shows; the transcript's cache key.
        self.version = 0
        # Set by the transcript while the keyboard cursor is on this block.
        self.highlighted = False

    def changed(self) -> None:
        self.version += 1

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.changed()

    def render_lines(self, width: int, look: Look) -> Sequence[Strip]:
        """The block's lines, each exactly `width` cells, margins included.

        A list, or a sequence that draws its lines when asked (a long answer); one with a
        `weight` says how many lines it really holds.
        """
        raise NotImplementedError

    def plain_text(self) -> str:
        """What the block shows, as plain text (for tests, copies and searches)."""
        raise NotImplementedError

    def drop_cache(self) -> None:
        """Forget any lines kept inside the block (the transcript is short of memory)."""


def render_segments(
    renderable: RenderableType, width: int, look: Look, style: Style | None = None
) -> list[list[Segment]]:
    """A rich renderable as lines of segments, each padded to exactly `width` cells."""
    options = look.console.options.update(width=max(1, width), height=None, highlight=False)
    return look.console.render_lines(renderable, options, style=style or Style(), pad=True)


def framed(
    lines: Iterable[Iterable[Segment]],
    width: int,
    *,
    left: int = 0,
    right: int = 0,
    style: Style | None = None,
    border: Segment | None = None,
) -> list[Strip]:
    """Lines drawn at the inner width, with a left border and padding around them."""
    pad_style = style or Style()
    head: list[Segment] = [border] if border is not None else []
    if left:
        head.append(Segment(" " * left, pad_style))
    tail = [Segment(" " * right, pad_style)] if right else []
    if width - left - right - (1 if border is not None else 0) >= 1:
        # Lines come padded to the inner width: the frame is exactly `width` wide.
        return [Strip([*head, *line, *tail], width) for line in lines]
    # Narrower than the frame itself: the clamped inner width overflows, so cut.
    return [Strip([*head, *line, *tail]).adjust_cell_length(width) for line in lines]


def inner_width(width: int, *, left: int = 0, right: int = 0, border: bool = False) -> int:
    return max(1, width - left - right - (1 if border else 0))


def blank_lines(count: int, width: int) -> list[Strip]:
    return [Strip.blank(width)] * count
