"""The assistant's markdown as rich renders it, with code fences that join seamlessly.

`rich.markdown` pulls in markdown-it and pygments (tens of milliseconds), so it is
imported on the first answer, not before the app's first frame.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, ClassVar

from ink_tui import fastpaths

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from rich.markdown import Markdown

DARK_CODE_THEME = "monokai"
LIGHT_CODE_THEME = "default"


@cache
def code_lexer(name: str) -> Lexer:
    """The lexer for a fence's language: pygments' own lexers only, looked up once a name.

    Rich looks the lexer up on every render, and the open fence of a streaming answer is
    rendered every frame: a lookup walks pygments' table (about 2 ms), and a name it does
    not know (```jsx2, or ```pyth while the info string is still arriving) makes
    pygments import every installed plugin's entry point (200 ms here, IPython's).
    Plugin lexers are given up for that: an unknown language shows as plain code.
    Regex lexers try each state's rules in one call (the `combined_lexer` fast path).
    """
    from pygments.lexers import LEXERS, get_lexer_by_name
    from pygments.lexers.special import TextLexer

    alias = name.lower()
    if any(alias in aliases for _module, _name, aliases, _files, _mimes in LEXERS.values()):
        lexer = get_lexer_by_name(alias, stripnl=False, ensurenl=True, tabsize=4)
        if not fastpaths.enabled("combined_lexer"):
            return lexer
        from ink_tui.fastpaths.pygments_lexers import combined_lexer

        return combined_lexer(lexer)
    return TextLexer(stripnl=False, ensurenl=True, tabsize=4)


@cache
def _markdown_class() -> type[Markdown]:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.markdown import CodeBlock, Markdown, MarkdownElement
    from rich.syntax import Syntax

    code_syntax: type[Syntax] = Syntax
    if fastpaths.enabled("answer_syntax"):
        from ink_tui.fastpaths.rich_syntax import AnswerSyntax

        code_syntax = AnswerSyntax
    init_markdown: Callable[[Markdown, str, str], None] | None = None
    if fastpaths.enabled("markdown_parser"):
        from ink_tui.fastpaths import rich_markdown

        init_markdown = rich_markdown.init_markdown

    class FlushCodeBlock(CodeBlock):
        """Code without blank padding rows, so the pieces of a long fence join up."""

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            code = str(self.text)
            # Only the fence's own final newline goes: trailing blank code lines stay.
            code = code[:-1] if code.endswith("\n") else code
            lexer = code_lexer(self.lexer_name or "text")
            yield code_syntax(code, lexer, theme=self.theme, word_wrap=True, padding=(0, 1))

    class AnswerMarkdown(Markdown):
        elements: ClassVar[dict[str, type[MarkdownElement]]] = {
            **Markdown.elements,
            "fence": FlushCodeBlock,
            "code_block": FlushCodeBlock,
        }

        def __init__(self, markup: str, code_theme: str) -> None:
            if init_markdown is None:
                super().__init__(markup, code_theme=code_theme)
            else:
                init_markdown(self, markup, code_theme)

    return AnswerMarkdown


def answer_markdown(source: str, dark: bool) -> Markdown:
    code_theme = DARK_CODE_THEME if dark else LIGHT_CODE_THEME
    return _markdown_class()(source, code_theme=code_theme)


# What a first answer is likely to hold: a paragraph, a list, a Python fence.
_WARM_SAMPLE = (
    "Some **text** with `code`.\n\n- one\n- two\n\n"
    "```python\ndef f(x: int) -> int:\n    return x\n```"
)


def warm_answer_markdown() -> None:
    """Import and build what drawing the first answer needs, for a worker thread.

    Left to the first answer, it is some 80 ms on the UI's loop while the model streams
    (importing rich.markdown 25, building pygments' Python lexer 25, the first renders
    filling Rich's style caches 30): keys typed then wait. Every piece is cached at
    module level and safe to build on another thread; the console is a throwaway.
    """
    from rich.console import Console

    code_lexer("python")
    console = Console(width=80, color_system="truecolor", force_terminal=True)
    for dark in (True, False):
        console.render_lines(answer_markdown(_WARM_SAMPLE, dark), pad=True)
