"""Getting the renderer ready once the app has started.

The first answer needs `rich.markdown` (markdown-it) and pygments with a lexer: some
50 ms of imports and first renders that would otherwise land on the UI's event loop in
the middle of the first stream. They are done on a thread right after start-up. (What
the garbage collector does then is `fastpaths.gc_policy`'s.)
"""

from __future__ import annotations

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
