"""A finished block holds few objects of its own: a long session holds thousands of them,
and every tracked object is walked by each full garbage collection."""

from __future__ import annotations

import gc

from rich.console import Console
from rich.style import Style

from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.blocks.block import Block, Look
from ink_tui.ui.blocks.thinking_block import ThinkingBlock

LOOK = Look(Console(width=80), lambda name: Style())
WIDTH = 60
ANSWER = "Some prose with `code`.\n\n- one\n- two\n\n```python\nx = 1\n```\n\nThe end."


def own_tracked(block: Block) -> int:
    """Tracked objects reachable from `block`, not counting shared ones (classes, look)."""
    gc.collect()  # tuples of plain values are untracked by a pass
    seen: set[int] = set()
    stack: list[object] = [block]
    count = 0
    while stack:
        item = stack.pop()
        if id(item) in seen or not gc.is_tracked(item):
            continue
        seen.add(id(item))
        if isinstance(item, type | Look) or type(item).__module__.startswith("rich."):
            continue
        count += 1
        stack.extend(gc.get_referents(item))
    return count


def streamed_answer(pieces: int) -> AnswerBlock:
    answer = AnswerBlock()
    for n in range(0, len(ANSWER), len(ANSWER) // pieces):
        answer.append(ANSWER[n : n + len(ANSWER) // pieces])
        answer.flush()
    return answer


def test_a_complete_answer_scrolled_away_holds_its_groups_only() -> None:
    answer = streamed_answer(7)
    streaming = own_tracked(answer)
    answer.close()
    answer.flush()
    lines = answer.render_lines(WIDTH, LOOK)
    assert "The end." in [line.text.strip() for line in lines]
    del lines
    answer.drop_cache()
    # The block, its list of groups and the groups: no parser, buffers or kept order.
    assert own_tracked(answer) == 2 + len(answer.groups) < streaming
    assert answer.text == ANSWER
    # Drawn again when scrolled back to, the same lines.
    assert "The end." in [line.text.strip() for line in answer.render_lines(WIDTH, LOOK)]


def test_text_appended_after_the_end_is_kept_but_not_shown() -> None:
    answer = streamed_answer(3)
    answer.close()
    answer.flush()
    shown = answer.plain_text()
    answer.append(" late")
    assert not answer.flush()
    assert answer.text == ANSWER + " late"
    assert answer.plain_text() == shown


def test_flushed_reasoning_holds_no_list() -> None:
    block = ThinkingBlock()
    for word in ("Let ", "me ", "think."):
        block.append(word)
    assert block.has_pending
    assert block.flush()
    assert not block.has_pending
    assert own_tracked(block) == 1
    block.append(" More.")
    assert block.has_pending and block.text == "Let me think. More."
    assert block.flush()
    assert block.plain_text() == "Let me think. More."


def test_a_complete_answer_holds_its_text_once_unless_it_reads_differently() -> None:
    answer = streamed_answer(5)
    answer.close()
    answer.flush()
    assert answer.text == ANSWER == answer.plain_text()
    assert answer._text is None  # the groups' sources say it all
    odd = "Gaps   \n\n\n\nbetween paragraphs\n\n"
    other = AnswerBlock()
    other.append(odd)
    other.close()
    other.flush()
    assert other.plain_text() != odd and other.text == odd
