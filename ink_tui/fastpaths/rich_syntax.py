"""Code of an answer's fences highlighted the way rich.syntax.Syntax draws it, for less.

Imported with `rich.markdown`, on the first answer (see answer_markdown).

Rich turns the lexer's tokens into a Text, splits it into lines and word-wraps each
line through a full `render_lines` (divided, justified, cropped, styled again), then
renders the result once more to pad it: some 150 us a code line, most of what a
streamed answer's frame spent, although nearly every code line fits its width. Here a
block whose lines all fit (ASCII, printable) goes from tokens straight to padded
segments, the same segments with the same styles Rich ends up with: a styled token is
a segment of its own, unstyled text runs together, the padding to the width is plain.
Anything else goes Rich's way, a line that fits still spared the wrapping.

Touches: `rich.syntax.Syntax`'s private methods and attributes (`_get_base_style`,
`_process_code`, `_stylized_ranges`, `_theme`), and re-implements its `__rich_console__`
and `_get_syntax`. `check()` compares those two methods' sources with the ones this was
written from (digests) and looks for the rest; refused, fences are Rich's own `Syntax`.
tests/test_answer_syntax.py holds the segments equal to Rich's.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from pygments.lexer import Lexer
from pygments.token import _TokenType
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme

# Digests of the sources of the Syntax methods re-implemented here, as written from.
WRITTEN_FROM = {"__rich_console__": "7a1ecd7c2560926a", "_get_syntax": "f4556a3e5ac84fb1"}


def check() -> str | None:
    import hashlib
    import inspect

    for name, expected in WRITTEN_FROM.items():
        source = inspect.getsource(getattr(Syntax, name))
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        if digest != expected:
            return f"rich Syntax.{name} changed (source {digest}, not {expected})"
    for name, parameters in (("_process_code", ("self", "code")), ("_get_base_style", ("self",))):
        found = tuple(inspect.signature(getattr(Syntax, name)).parameters)
        if found != parameters:
            return f"rich Syntax.{name} takes {found}"
    probe = Syntax("x", "text")
    for attribute in ("_stylized_ranges", "_theme", "padding", "lexer", "default_lexer"):
        if not hasattr(probe, attribute):
            return f"rich Syntax has no {attribute}"
    return None


class AnswerSyntax(Syntax):
    """Syntax with word wrap and (0, 1) padding, as an answer's code is drawn."""

    def __init__(
        self,
        code: str,
        lexer: Lexer,
        *,
        theme: str,
        padding: tuple[int, int],
        word_wrap: bool = True,
    ) -> None:
        super().__init__(code, lexer, theme=_theme(theme), word_wrap=word_wrap, padding=padding)
        self._theme_name = theme

    def _plain(self) -> bool:
        """Whether this Syntax is one `__rich_console__` can draw itself."""
        top, _right, bottom, _left = self.padding
        return not (
            self.line_numbers
            or not self.word_wrap
            or self.line_range
            or self.indent_guides
            or self.code_width is not None
            or self._stylized_ranges
            or self.background_color is not None
            or top
            or bottom
            or self._get_base_style().transparent_background
        )

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = self._fitting_lines(options) if self._plain() else None
        if lines is None:
            yield from super().__rich_console__(console, options)
            return
        _top, right, _bottom, left = self.padding
        code_width = options.max_width - left - right
        base = self._get_base_style()
        head = Segment(" " * left, base) if left else None
        end = [Segment(" " * right, base), Segment.line()] if right else [Segment.line()]
        styles = _token_styles(self._theme_name, base)
        theme_style = self._theme.get_style_for_token
        line_segments: list[Segment] = []
        run: list[str] = []  # unstyled text since the last styled token
        used = 0
        lexer = self.lexer or self.default_lexer
        line_index = 0
        for token_type, token in lexer.get_tokens(lines[1]):
            style = styles.get(token_type)
            if style is None:
                token_style = theme_style(token_type)
                style = styles[token_type] = base + token_style if token_style else base
            pieces = token.split("\n")
            for number, piece in enumerate(pieces):
                if number:
                    # The line ends: pad it, hand it over, start the next.
                    if line_index < lines[0]:
                        yield from _line(head, line_segments, run, code_width - used, base, end)
                    line_index += 1
                    line_segments, run, used = [], [], 0
                if not piece:
                    continue
                used += len(piece)
                if style is base:
                    run.append(piece)
                    continue
                if run:
                    line_segments.append(Segment("".join(run), base))
                    run = []
                line_segments.append(Segment(piece, style))
        if line_index < lines[0]:
            # The blank line after a final newline of the source's own.
            yield from _line(head, line_segments, run, code_width - used, base, end)

    def _get_syntax(self, console: Console, options: ConsoleOptions) -> Iterable[Segment]:
        """Rich's own, except that a code line that fits is not word-wrapped."""
        base_style = self._get_base_style()
        if not self._plain():
            yield from super()._get_syntax(console, options)
            return
        _pad_top, pad_right, _pad_bottom, pad_left = self.padding
        code_width = max(0, options.max_width - pad_left - pad_right)
        ends_on_nl, processed_code = self._process_code(self.code)
        text = self.highlight(processed_code, self.line_range)
        render_options = options.update(width=code_width, height=None, justify="left")
        background_style = base_style
        new_line = Segment("\n")
        apply_style = Segment.apply_style
        for line in text.split("\n", allow_blank=ends_on_nl):
            plain = line.plain
            if plain.isascii() and plain.isprintable() and len(plain) <= code_width:
                line.truncate(code_width, pad=True)
                yield from apply_style(line.render(console, end=""), background_style)
            else:
                for wrapped_line in console.render_lines(
                    line, render_options, style=background_style, pad=True
                ):
                    yield from wrapped_line
                    yield new_line
                continue
            yield new_line

    def _fitting_lines(self, options: ConsoleOptions) -> tuple[int, str] | None:
        """How many lines Rich would draw and the code to lex, if every line fits."""
        _top, right, _bottom, left = self.padding
        code_width = options.max_width - left - right
        if code_width < 1:
            return None
        ends_on_nl, code = self._process_code(self.code)
        if not code.isascii():
            return None
        lines = code.split("\n")
        # The code ends with a newline; Rich keeps the empty line after it only when the
        # source ended with one itself.
        count = len(lines) if ends_on_nl else len(lines) - 1
        for line in lines:
            if len(line) > code_width or not line.isprintable():
                return None
        return count, code


def _line(
    head: Segment | None,
    segments: list[Segment],
    run: list[str],
    pad: int,
    base: Style,
    end: list[Segment],
) -> Iterable[Segment]:
    """One padded code line, its padding run together with unstyled text before it."""
    if head is not None:
        yield head
    yield from segments
    rest = "".join(run) + " " * pad
    if rest:
        yield Segment(rest, base)
    yield from end


@cache
def _theme(name: str) -> SyntaxTheme:
    """One theme a name: Rich builds one per Syntax (half a millisecond, a pygments
    style class walked), and each keeps its own cache of token styles."""
    return Syntax.get_theme(name)


_STYLES: dict[tuple[str, Style], dict[_TokenType, Style]] = {}


def _token_styles(theme: str, base: Style) -> dict[_TokenType, Style]:
    """Token type -> the style its segments get, per theme and base style; `base` itself
    for a token the theme leaves unstyled (Rich gives such text no span of its own)."""
    key = (theme, base)
    styles = _STYLES.get(key)
    if styles is None:
        styles = _STYLES[key] = {}
    return styles
