"""`straddle._longest_start`, the held end found from the text's last character, is the
longest end that is a proper start of a word: compared with a brute force over every
end, for words and texts that share their characters (Hypothesis). And `Straddle`
holds nothing back of a text with no such end, marker, key or token."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ink_tui.serve.straddle import MARKERS, Straddle, _longest_start, _starts_by_last_char

ALPHABET = "ab-k\n é"


def brute_force(text: str, words: list[str]) -> int:
    return max(
        (
            length
            for length in range(1, len(text) + 1)
            for word in words
            if len(word) > length and word.startswith(text[-length:])
        ),
        default=0,
    )


@settings(max_examples=500, deadline=None)
@given(
    words=st.lists(st.text(ALPHABET, min_size=1, max_size=12), max_size=5),
    text=st.text(ALPHABET, min_size=1, max_size=30),
)
def test_the_longest_proper_start_at_the_end(words: list[str], text: str) -> None:
    assert _longest_start(text, _starts_by_last_char(words)) == brute_force(text, words)


@settings(max_examples=300, deadline=None)
@given(text=st.text("abkx -é\n", max_size=40))
def test_nothing_is_held_of_a_text_that_begins_no_secret(text: str) -> None:
    secrets = ["zz-secret-1234"]
    held = Straddle(secrets)(text)
    words = [*secrets, *MARKERS]
    folded = text[-max(map(len, MARKERS)) :].lower()
    may_begin = brute_force(text, secrets) or (folded.isascii() and brute_force(folded, words))
    if not may_begin and "authori" not in text.lower() and "bearer" not in text.lower():
        assert held == 0
    else:
        assert 0 <= held <= len(text)


def test_an_empty_text_holds_nothing() -> None:
    assert Straddle(["sk-proj-1"])("") == 0
