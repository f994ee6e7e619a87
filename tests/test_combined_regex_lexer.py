"""Regex lexers with each state's rules joined into one pattern give pygments' own tokens."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import RegexLexer
from pygments.lexers import LEXERS, get_lexer_by_name

from ink_tui.fastpaths.pygments_lexers import combine, combined_lexer
from ink_tui.ui.blocks.answer_markdown import code_lexer
from tests.fastpath_helpers import needs_fast_path

SAMPLES = [
    "def merge(left: list[int], right: list[int]) -> list[int]:\n"
    "    '''doc\n    string'''\n    out = [x for x in left if x > 0]  # keep\n"
    '    return f"{out!r:>10}" + r"\\d" + b"\\x00"\n@dataclass\nclass A(B): pass\n',
    'fn main() { let x = "a\\"b"; /* c */ println!("{}", x); }\n',
    "<div class='x'>&amp; <b>hi</b></div>\n<?php echo $x; ?>\n",
    "SELECT a, b FROM t WHERE x = 'y' -- c\n",
    'for i in $(seq 1 3); do echo "$i" | grep -E "^[0-9]+$"; done\n# comment\n',
    '{"a": [1, 2.5e3, true, null], "b": {"c": "d\\u00e9"}}\n',
    '#include <stdio.h>\nint main(void) { printf("%d\\n", 1 << 3); return 0; }\n',
    "@@ -1,3 +1,4 @@\n-a\n+b\n c\n",
    "\x00\x01 weird ~~~ ``` \t\t\n\n unclosed ' \" /* (( [[ {{\n",
]


def _regex_lexer_aliases() -> list[str]:
    aliases = []
    for _module, _name, names, _files, _mimes in LEXERS.values():
        if names:
            aliases.append(names[0])
    return aliases


def test_every_joined_regex_lexer_gives_pygments_tokens() -> None:
    joined = 0
    text = "\n".join(SAMPLES)
    for alias in _regex_lexer_aliases():
        try:
            stock = get_lexer_by_name(alias)
        except Exception:  # a lexer whose optional dependency is missing
            continue
        fast = combined_lexer(stock)
        if fast is stock:
            continue
        joined += 1
        for sample in [*SAMPLES, text]:
            assert list(fast.get_tokens(sample)) == list(stock.get_tokens(sample)), alias
    # Most of pygments' lexers are plain regex lexers (about 420 of 600 today).
    assert joined > 300


@pytest.mark.parametrize("alias", ["python", "javascript", "rust", "bash", "json", "c", "go"])
@settings(max_examples=60, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("ab1 _\n\t\"'`#/*\\{}()[]<>=.:;,$@rfx-+")), max_size=80
    )
)
def test_random_text_lexes_the_same(alias: str, text: str) -> None:
    stock = get_lexer_by_name(alias)
    assert list(combined_lexer(stock).get_tokens(text)) == list(stock.get_tokens(text))


@needs_fast_path("combined_lexer")
def test_the_answer_lexer_is_joined_and_the_heavy_states_are_too() -> None:
    lexer = code_lexer("python")
    assert type(lexer) is not type(get_lexer_by_name("python"))
    tokens = type(lexer)._tokens
    # Python's two big states write their patterns with a leading (?i) on some rules.
    assert combine(tokens["root"]) is not None
    assert combine(tokens["expr"]) is not None


def test_states_that_cannot_be_joined_keep_the_rules_one_by_one() -> None:
    def rule(pattern: str, flags: int = re.MULTILINE) -> tuple[object, None, None]:
        return (re.compile(pattern, flags).match, None, None)

    # A numbered back-reference moves once joined.
    assert combine([rule(r"(a)\1"), rule("b")]) is None
    # Different flags.
    assert combine([rule("a"), rule("b", re.IGNORECASE)]) is None
    # A verbose pattern's leading flag is left global, which cannot be joined.
    assert combine([rule("(?x) a # c"), rule("b")]) is None
    # A group name used twice does not compile joined.
    assert combine([rule("(?P<n>a)"), rule("(?P<n>b)")]) is None
    joined = combine([rule("(?i)ab"), rule("(c)(d)"), rule("")])
    assert joined is not None
    found = joined.match("xcd", 1)
    assert found is not None and joined.rules[found.lastindex or 0] is not None


def test_a_lexer_that_is_not_a_plain_regex_lexer_is_left_alone() -> None:
    csharp = get_lexer_by_name("csharp")  # rules chosen per instance
    assert combined_lexer(csharp) is csharp
    php = get_lexer_by_name("php")  # a tokenizer of its own over the rules
    assert type(php).get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed
    assert combined_lexer(php) is php
