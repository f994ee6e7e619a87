"""Getting the heap ready once the app has started: warm renderer, short GC passes.

The first answer needs `rich.markdown` (markdown-it) and pygments with a lexer: some
50 ms of imports and first renders that would otherwise land on the UI's event loop in
the middle of the first stream. They are done on a thread right after start-up.

A full garbage collection walks every tracked object; a Textual app has some 65,000 of
them before the user types a word (modules, classes, widgets, styles), and they live as
long as the app. Frozen after start-up, they are left out of every later pass: each full
collection while a model streams is about 15 ms shorter on 2 cores, and those pauses
are what a key press waits behind.
"""

from __future__ import annotations

import gc
import io

from rich.console import Console

# A little of what answers hold: a heading, a list, inline code and a fenced block.
_SAMPLE = (
    "# Title\n\n- an item with `code`\n\n```python\ndef f(x: int) -> int:\n    return x\n```\n"
)


def warm_up_renderer(dark: bool) -> None:
    """Render a small answer off screen, so the first real one finds everything loaded."""
    from ink_tui.ui.blocks.answer_markdown import answer_markdown

    console = Console(file=io.StringIO(), width=80, color_system="truecolor")
    console.print(answer_markdown(_SAMPLE, dark))


def freeze_long_lived() -> None:
    """A resumed session is in: keep its blocks out of later full collections too.

    A transcript of 20,000 messages is some 120,000 tracked objects; a full collection
    walked them all (130-200 ms on 2 cores), and one came every few dozen scrolls.
    Frozen, the next full pass takes about 4 ms. Objects frozen are still freed when no
    longer referenced; only cyclic garbage among them stays until the process ends.
    """
    gc.collect()
    gc.freeze()
