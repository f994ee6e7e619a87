"""AnswerSyntax draws code exactly as rich's Syntax does, segment for segment."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.syntax import Syntax

from ink_tui.fastpaths.rich_syntax import AnswerSyntax
from ink_tui.ui.blocks.answer_markdown import code_lexer, warm_answer_markdown

SAMPLES = [
    ("python", 'def f(x: int) -> str:\n    """Doc."""\n    return f"{x}"  # done'),
    ("python", 'x = """multi\nline   \n\nstring"""\n\n\n  y = 1  \n'),
    ("python", 'def f():\n\treturn "tab"\n'),
    ("python", ""),
    ("python", "\n\n"),
    ("python", "a" * 37),
    ("python", "a" * 38 + "\nb = 1"),
    ("python", 'print("héllo")\n'),
    ("python", "x = 1\r\ny = 2\n"),
    ("js", "const x = `tmpl\n${y}`; // comment\nfunction f(a, b) { return a + b }\n"),
    ("bash", 'for i in $(seq 1 3); do\n  echo "$i" # c\ndone\n'),
    ("diff", "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n"),
    ("text", "plain text   \n with spaces  "),
    ("nosuchlang", "x y z\n"),
]


def lines(console: Console, syntax: Syntax) -> list[list[tuple[str, object]]]:
    drawn = console.render_lines(syntax, pad=True)
    return [[(segment.text, segment.style) for segment in line] for line in drawn]


@pytest.mark.parametrize("width", [40, 12, 3])
@pytest.mark.parametrize("theme", ["monokai", "default"])
@pytest.mark.parametrize(("language", "code"), SAMPLES)
def test_same_segments_as_rich(width: int, theme: str, language: str, code: str) -> None:
    console = Console(width=width, color_system="truecolor", force_terminal=True)
    lexer = code_lexer(language)
    for source in (code, code + "\n"):
        rich = Syntax(source, lexer, theme=theme, word_wrap=True, padding=(0, 1))
        ours = AnswerSyntax(source, lexer, theme=theme, padding=(0, 1))
        assert lines(console, ours) == lines(console, rich)


def test_fitting_code_skips_rich_wrapping(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("went Rich's way")

    monkeypatch.setattr(AnswerSyntax, "_get_syntax", refuse)
    console = Console(width=40)
    ours = AnswerSyntax("x = 1\n\ny = 2", code_lexer("python"), theme="monokai", padding=(0, 1))
    assert len(console.render_lines(ours)) == 3


def test_warm_up_runs() -> None:
    warm_answer_markdown()
