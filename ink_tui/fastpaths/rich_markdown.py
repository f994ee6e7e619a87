"""An answer's markdown document made without building a markdown-it parser for it.

Rich's `Markdown.__init__` builds and configures a new parser for every document (half
a millisecond), and a streaming answer makes a document or two a frame. Parsing keeps its
state in the call, not in the parser, so one parser, configured as Rich configures its
own, serves every answer; the document's other settings are copied from one built the
usual way.

Touches: the attributes `Markdown.__init__` sets (set here instead of calling it) and the
parser configuration it uses. `check()` compares both with what this was written for;
refused, every document is built by Rich's own `__init__`.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

MARKDOWN_ATTRIBUTES = frozenset(
    {
        "code_theme",
        "hyperlinks",
        "inline_code_lexer",
        "inline_code_theme",
        "justify",
        "markup",
        "parsed",
        "style",
    }
)
PARSER_SETUP = 'MarkdownIt().enable("strikethrough").enable("table")'


def check() -> str | None:
    import inspect

    from rich.markdown import Markdown

    found = frozenset(vars(Markdown("")))
    if found != MARKDOWN_ATTRIBUTES:
        return f"rich Markdown sets {sorted(found ^ MARKDOWN_ATTRIBUTES)} unlike expected"
    if PARSER_SETUP not in inspect.getsource(Markdown.__init__):
        return "rich Markdown configures its parser unlike expected"
    return None


def init_markdown(document: Markdown, markup: str, code_theme: str) -> None:
    """What `Markdown.__init__(document, markup, code_theme=code_theme)` does, with the
    parser built once."""
    document.__dict__.update(_settings(code_theme))
    document.markup = markup
    document.parsed = _parser().parse(markup)


@cache
def _settings(code_theme: str) -> dict[str, object]:
    from rich.markdown import Markdown

    return dict(vars(Markdown("", code_theme=code_theme)))


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")
