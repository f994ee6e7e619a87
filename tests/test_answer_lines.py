"""A long answer keeps its heights for good but only a few screens of drawn lines."""

from __future__ import annotations

from rich.console import Console
from rich.style import Style

from ink_tui.ui.blocks import answer_block
from ink_tui.ui.blocks.answer_block import AnswerBlock, AnswerLines
from ink_tui.ui.blocks.block import Look

LOOK = Look(Console(width=80), lambda name: Style())
WIDTH = 60


def long_answer(paragraphs: int) -> AnswerBlock:
    answer = AnswerBlock()
    for n in range(paragraphs):
        # One flush per paragraph: one group each, as when a model streams.
        answer.append(f"Paragraph {n} says something long enough to wrap once or twice. " * 2)
        answer.append("\n\n")
        answer.flush()
    answer.close()
    answer.flush()
    return answer


def test_every_line_can_be_drawn_while_only_a_few_screens_are_kept() -> None:
    answer = long_answer(300)
    lines = answer.render_lines(WIDTH, LOOK)
    assert isinstance(lines, AnswerLines) and len(answer.groups) == 300
    kept_limit = answer_block.KEPT_LINES + max(g.height(WIDTH, LOOK) for g in answer.groups)
    assert answer.kept_lines <= kept_limit
    texts = [line.text.strip() for line in lines]
    assert len(texts) == len(lines) > answer_block.KEPT_LINES
    assert answer.kept_lines <= kept_limit
    shown = " ".join(text for text in texts if text)
    positions = [shown.index(f"Paragraph {n} ") for n in range(300)]
    assert positions == sorted(positions)
    assert sum(group.drawn for group in answer.groups) < 300


def test_a_dropped_group_is_drawn_again_at_the_same_height_when_asked_for() -> None:
    answer = long_answer(300)
    lines = answer.render_lines(WIDTH, LOOK)
    first = answer.groups[0]
    assert not first.drawn  # the first group was pushed out by the later ones
    renders, height = first.renders, first.height(WIDTH, LOOK)
    assert lines[0].text.strip().startswith("Paragraph 0")
    assert first.drawn and first.renders == renders + 1
    assert first.height(WIDTH, LOOK) == height
    assert lines[-1] is lines[len(lines) - 1]


def test_the_transcript_cache_counts_what_an_answer_really_holds() -> None:
    answer = long_answer(300)
    lines = answer.render_lines(WIDTH, LOOK)
    assert isinstance(lines, AnswerLines)
    assert lines.weight == answer.kept_lines < len(lines)


def test_fence_languages_are_looked_up_without_scanning_plugins(monkeypatch) -> None:
    import pygments.lexers
    from pygments.lexers.special import TextLexer

    from ink_tui.ui.blocks.answer_markdown import code_lexer

    def scan() -> None:
        raise AssertionError("pygments scanned the installed plugins")

    # An unknown name, e.g. a language still arriving ("pyth"), must not reach the scan.
    monkeypatch.setattr(pygments.lexers, "find_plugin_lexers", scan)
    code_lexer.cache_clear()
    try:
        assert isinstance(code_lexer("pyth"), TextLexer)
        assert type(code_lexer("Python")).__name__ == "PythonLexer"
        assert code_lexer("pyth") is code_lexer("pyth")
    finally:
        code_lexer.cache_clear()


def test_a_list_is_spaced_the_same_streamed_in_pieces_or_rendered_whole() -> None:
    source = "## Try this\n\n- one\n- two\n\nAfter the list.\n\n```python\n\nx = 1\n```"
    whole = AnswerBlock()
    whole.append(source)
    whole.close()
    whole.flush()
    streamed = AnswerBlock()
    for piece in source.split("\n\n"):
        streamed.append(piece + "\n\n")
        streamed.flush()  # one group per flush: the heading and the list apart
    streamed.close()
    streamed.flush()
    assert len(whole.groups) == 1 and len(streamed.groups) > 1

    def texts(answer: AnswerBlock) -> list[str]:
        return [line.text.rstrip() for line in answer.render_lines(WIDTH, LOOK)]

    assert texts(streamed) == texts(whole)
    # The code's own blank first line stays.
    shown = texts(whole)
    assert shown[shown.index("  After the list.") + 2].strip() == ""
    assert "x = 1" in shown[shown.index("  After the list.") + 3]


def test_the_shared_parser_reads_markdown_as_rich_does() -> None:
    from rich.markdown import Markdown

    from ink_tui.ui.blocks.answer_markdown import answer_markdown

    source = (
        "# Head\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n~~gone~~ *em* **strong** `code`\n\n"
        "- item\n  1. nested\n\n> quote\n\n```python\nx = 1\n```\n\n"
        "[link](https://x.y) <kbd>K</kbd>"
    )
    ours = answer_markdown(source, dark=True)
    theirs = Markdown(source, code_theme="monokai")
    assert [t.as_dict() for t in ours.parsed] == [t.as_dict() for t in theirs.parsed]
    settings = {k: v for k, v in vars(theirs).items() if k not in ("markup", "parsed")}
    assert {k: v for k, v in vars(ours).items() if k not in ("markup", "parsed")} == settings
    # A second document through the same parser does not see the first one's state.
    again = answer_markdown("plain", dark=True)
    assert [t.type for t in again.parsed] == ["paragraph_open", "inline", "paragraph_close"]


def test_on_a_budget_a_flush_takes_one_block_at_least_and_the_screen_never_goes_back() -> None:
    answer = AnswerBlock()
    answer.append("First paragraph.\n\nSecond")
    answer.flush(0)
    answer.render_lines(WIDTH, LOOK)  # drawn once: the width finished groups are drawn at
    shown = [answer.plain_text()]
    answer.append(" paragraph.\n\n- a list\n\n```python\nx = 1\n```\n\nThe open tail")
    flushes = 0
    while answer.flush(0):
        flushes += 1
        lines = answer.render_lines(WIDTH, LOOK)
        shown.append(" ".join(line.text.strip() for line in lines if line.text.strip()))
        if not answer.waiting:
            break
    # Budget 0: one finished block per flush, with no tail until they are all in.
    assert flushes == 3 and not answer.waiting
    assert answer.tail_source == "The open tail"
    assert [g.source for g in answer.groups][1:] == [
        "Second paragraph.",
        "- a list",
        "```python\nx = 1\n```",
    ]
    assert all(group.drawn for group in answer.groups)
    # Each frame shows everything the one before did, and more.
    assert shown[1].startswith("First paragraph. Second paragraph.")
    assert "Second" in shown[0] and "a list" not in shown[1]
    assert "a list" in shown[2] and "x = 1" not in shown[2]
    assert shown[3].endswith("x = 1 The open tail")


def test_a_complete_answer_is_taken_in_whole_whatever_the_budget() -> None:
    answer = AnswerBlock()
    answer.append("One.\n\nTwo.\n\n")
    answer.flush(0)
    answer.render_lines(WIDTH, LOOK)
    answer.append("Three.\n\nFour.\n\nFive.")
    answer.flush(0)
    assert answer.waiting
    answer.close()
    assert answer.flush(0) and not answer.waiting
    # Blocks taken in by one flush share a group, as without a budget.
    assert [g.source for g in answer.groups] == ["One.\n\nTwo.", "Three.", "Four.\n\nFive."]
    assert answer.plain_text() == answer.text
