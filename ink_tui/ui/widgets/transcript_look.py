"""The transcript's colours: its component classes, and the `Look` blocks draw with.

Styles live in CSS (component classes of the widget) so they follow the theme. Blocks
ask for them by name on every line they draw, so they are resolved once and kept until
the stylesheet changes; a new theme (not a mere focus change) redraws every block.
"""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget

from ink_tui.ui.blocks.block import Look

# Component classes, without the "transcript--" prefix; blocks ask `Look.style` for them.
STYLE_NAMES = (
    "user",
    "user-border",
    "user-injected-border",
    "user-shell-border",
    "extension",
    "extension-border",
    "thinking",
    "tool-body",
    "tool-failed",
    "tool-cursor",
    "notice-info",
    "notice-warning",
    "notice-error",
    "notice-error-border",
    "marker",
)
COMPONENT_CLASSES = {f"transcript--{name}" for name in STYLE_NAMES}

COMPONENT_CSS = """
    & > .transcript--user { background: $boost; text-style: bold; }
    & > .transcript--user-border { color: $primary; }
    & > .transcript--user-injected-border { color: $secondary; }
    & > .transcript--user-shell-border { color: $accent; }
    & > .transcript--extension { background: $warning 8%; text-style: italic; }
    & > .transcript--extension-border { color: $warning; }
    & > .transcript--thinking { color: $text-muted; text-style: italic; }
    & > .transcript--tool-body { color: $text-muted; }
    & > .transcript--tool-failed { color: $text-error; }
    & > .transcript--tool-cursor { background: $boost; }
    & > .transcript--notice-info { color: $text-muted; }
    & > .transcript--notice-warning { color: $text-warning; }
    & > .transcript--notice-error { color: $text-error; background: $error 10%; }
    & > .transcript--notice-error-border { color: $error; }
    & > .transcript--marker { background: $accent; color: $text; text-style: bold; }
"""


class TranscriptLook:
    """Resolved styles of one transcript widget, kept until its stylesheet changes."""

    def __init__(self, widget: Widget) -> None:
        self._widget = widget
        self._styles: dict[str, Style] = {}
        self._stale = True
        self._look: Look | None = None
        self._base: Style | None = None

    def invalidate(self) -> None:
        """The stylesheet changed: check the styles again at the next frame.

        Component styles are not ready while the stylesheet is being applied, so they
        are only compared later (`restyle`).
        """
        self._stale = True
        self._base = None

    def restyle(self) -> bool:
        """True if the styles really changed since last time (a new theme)."""
        if not self._stale:
            return False
        self._stale = False
        styles = {name: self._resolve(name) for name in STYLE_NAMES}
        if styles == self._styles:
            return False
        self._styles = styles
        return True

    def style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self._resolve(name)
        return style

    def look(self, show_thinking: bool) -> Look:
        """What blocks draw with; asked for on every drawn row, so built once."""
        look = self._look
        dark = self._widget.app.current_theme.dark
        if look is None or look.dark != dark or look.show_thinking != show_thinking:
            look = self._look = Look(
                self._widget.app.console, self.style, dark=dark, show_thinking=show_thinking
            )
        return look

    @property
    def base(self) -> Style:
        """The widget's own style (`rich_style` walks the ancestors on each call)."""
        if self._base is None:
            self._base = self._widget.rich_style
        return self._base

    def _resolve(self, name: str) -> Style:
        # Borders take only their colour: they sit on the block's own background.
        return self._widget.get_component_rich_style(
            f"transcript--{name}", partial=name.endswith("-border")
        )
