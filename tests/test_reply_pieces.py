"""A reply's text held in few strings (core.text_pieces.Pieces)."""

from __future__ import annotations

from ink_tui.core.text_pieces import Pieces


def test_pieces_keep_the_text_in_order_in_few_strings() -> None:
    pieces = Pieces()
    words = [f"w{n} " for n in range(Pieces.GROUP * 3 + 17)]
    for word in words:
        pieces.append(word)
    assert pieces.text() == "".join(words)
    assert len(pieces._groups) == 3 and len(pieces._recent) == 17
