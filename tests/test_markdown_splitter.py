"""The pure markdown splitter: finished blocks at blank lines, fences kept whole."""

from __future__ import annotations

import pytest

from ink_tui.ui.blocks.markdown_splitter import (
    CODE_CHUNK_LINES,
    Block,
    MarkdownSplitter,
    split_markdown,
)


def texts(blocks: list[Block]) -> list[str]:
    return [block.text for block in blocks]


def stream(text: str, size: int) -> tuple[list[Block], str]:
    splitter = MarkdownSplitter()
    blocks: list[Block] = []
    for start in range(0, len(text), size):
        blocks.extend(splitter.feed(text[start : start + size]))
    return blocks, splitter.tail


def test_paragraphs_finish_at_blank_lines_and_the_last_stays_open() -> None:
    blocks, tail = split_markdown("# Title\n\nFirst para\nstill first.\n\nSecond")
    assert texts(blocks) == ["# Title", "First para\nstill first."]
    assert tail == "Second"


def test_a_block_is_finished_only_once_its_blank_line_arrives() -> None:
    splitter = MarkdownSplitter()
    assert splitter.feed("one\n") == []
    assert splitter.tail == "one"
    assert texts(splitter.feed("\n")) == ["one"]
    assert splitter.tail == ""


def test_text_without_a_newline_only_grows_the_tail() -> None:
    splitter = MarkdownSplitter()
    for piece in ("Hel", "lo ", "wor", "ld"):
        assert splitter.feed(piece) == []
    assert splitter.tail == "Hello world"


@pytest.mark.parametrize("size", [1, 3, 4, 7, 1000])
def test_streaming_in_any_pieces_gives_the_same_split(size: int) -> None:
    text = (
        "Intro\n\n```python\ndef f():\n\n    return 1\n```\n\n- a\n- b\n\n"
        "~~~\nraw\n\n~~~\n\nEnd of it"
    )
    assert stream(text, size) == split_markdown(text)


def test_blank_lines_inside_a_fence_do_not_split_it() -> None:
    text = "Look:\n\n```python\ndef f():\n\n\n    return 1\n```\n\nafter\n\n"
    blocks, tail = split_markdown(text)
    assert texts(blocks) == ["Look:", "```python\ndef f():\n\n\n    return 1\n```", "after"]
    assert tail == ""


def test_an_unclosed_fence_keeps_everything_after_it_in_the_tail() -> None:
    blocks, tail = split_markdown("Intro\n\n```\ncode\n\nmore code\n\nstill code")
    assert texts(blocks) == ["Intro"]
    assert tail == "```\ncode\n\nmore code\n\nstill code"


def test_tilde_fence_is_not_closed_by_backticks() -> None:
    blocks, tail = split_markdown("~~~\n```\n\n```\n~~~\n\nnext")
    assert texts(blocks) == ["~~~\n```\n\n```\n~~~"]
    assert tail == "next"


def test_a_closing_fence_must_be_at_least_as_long_as_the_opening() -> None:
    text = "````md\n```\n\n```\n````\n\nnext"
    blocks, tail = split_markdown(text)
    assert texts(blocks) == ["````md\n```\n\n```\n````"]
    assert tail == "next"


def test_backticks_with_a_backtick_in_the_info_string_are_not_a_fence() -> None:
    blocks, tail = split_markdown("```inline``` code\n\nnext")
    assert texts(blocks) == ["```inline``` code"]
    assert tail == "next"


def test_a_fence_indented_inside_a_list_item_still_holds_its_blank_lines() -> None:
    text = "1. Run:\n\n    ```bash\n    make\n\n    make test\n    ```\n\n2. Done"
    blocks, tail = split_markdown(text)
    assert texts(blocks) == ["1. Run:", "    ```bash\n    make\n\n    make test\n    ```"]
    assert tail == "2. Done"


def test_runs_of_blank_lines_and_leading_blank_lines_make_no_empty_blocks() -> None:
    blocks, tail = split_markdown("\n\n\none\n\n\n\ntwo\n\n\n")
    assert texts(blocks) == ["one", "two"]
    assert tail == ""


def test_crlf_line_endings_split_the_same_way() -> None:
    blocks, tail = split_markdown("one\r\n\r\n```\r\na\r\n\r\n```\r\n\r\ntwo")
    assert texts(blocks) == ["one\r", "```\r\na\r\n\r\n```\r"]
    assert tail == "two"


def test_finish_returns_the_open_block_and_starts_afresh() -> None:
    splitter = MarkdownSplitter()
    splitter.feed("a\n\n```\nopen code")
    assert splitter.in_fence
    assert splitter.finish() == "```\nopen code"
    assert not splitter.in_fence
    assert splitter.tail == ""
    assert texts(splitter.feed("fresh\n\n")) == ["fresh"]
    splitter.feed("  \n ")
    assert splitter.finish() == ""


def test_a_long_fence_is_cut_into_continued_pieces_that_keep_every_line() -> None:
    code = [f"line {n}" for n in range(CODE_CHUNK_LINES * 3)]
    text = "```python\n" + "\n".join(code) + "\n```\n\nafter\n\n"
    blocks, tail = stream(text, 4)
    pieces = blocks[:-1]
    assert len(pieces) >= 3
    assert [b.continued for b in pieces] == [True] * (len(pieces) - 1) + [False]
    assert blocks[-1] == Block("after")
    seen: list[str] = []
    for piece in pieces:
        lines = piece.text.split("\n")
        # Each piece is a fence of its own: reopened the same way, closed.
        assert lines[0] == "```python"
        assert lines[-1] == "```"
        assert len(lines) - 2 <= CODE_CHUNK_LINES + 1
        seen.extend(lines[1:-1])
    assert seen == code
    assert tail == ""


def test_the_open_tail_of_a_long_fence_stays_short() -> None:
    splitter = MarkdownSplitter()
    splitter.feed("~~~\n")
    for n in range(1000):
        splitter.feed(f"x = {n}\n")
    assert splitter.in_fence
    assert splitter.tail.startswith("~~~\n")
    assert splitter.tail.count("\n") <= CODE_CHUNK_LINES + 2
