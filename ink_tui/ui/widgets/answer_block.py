"""One streamed answer, rendered as markdown without re-rendering what is finished.

Text is buffered by `append` and taken in by `flush`, which the transcript calls at most
once per frame. The splitter hands back the top-level blocks that can no longer change;
the blocks finished in one flush become one `MarkdownBlock`, rendered once, and only the
open tail is re-rendered. Grouping per flush keeps the widget count down when text comes
in bursts (200 KB at once would otherwise be thousands of widgets to lay out).

Each finished group is a `Static` holding a `rich.markdown.Markdown`, not a Textual
`Markdown` widget: measured on 120 mixed blocks at 80x24, about 3 ms per block mounted
and drawn against about 17 ms, and one widget per block instead of six.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Console, ConsoleOptions
from rich.console import RenderResult as RichRenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.syntax import Syntax
from textual.app import ComposeResult, RenderResult
from textual.widget import Widget
from textual.widgets import Static

from ink_tui.ui.widgets.markdown_splitter import Block, MarkdownSplitter

DARK_CODE_THEME = "monokai"
LIGHT_CODE_THEME = "default"
# Blocks finished in one flush share a widget up to about this much source.
GROUP_CHARS = 4096


class _FlushCodeBlock(CodeBlock):
    """Code without blank padding rows, so the pieces of a long fence join seamlessly."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RichRenderResult:
        code = str(self.text)
        # Only the fence's own final newline goes: trailing blank code lines are kept.
        code = code[:-1] if code.endswith("\n") else code
        yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 1))


class AnswerMarkdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": _FlushCodeBlock,
        "code_block": _FlushCodeBlock,
    }


class MarkdownBlock(Static):
    """Finished markdown: its content is set once, never updated."""

    DEFAULT_CSS = """
    MarkdownBlock {
        height: auto;
        margin-bottom: 1;
    }
    MarkdownBlock.-continued {
        margin-bottom: 0;
    }
    """

    def __init__(self, source: str, code_theme: str, continued: bool = False) -> None:
        super().__init__(
            AnswerMarkdown(source, code_theme=code_theme),
            classes="-continued" if continued else "",
        )
        self.source = source
        # Counts Textual asking for the renderable; tests use it to prove the block is
        # not rendered again while later text streams in.
        self.renders = 0

    def render(self) -> RenderResult:
        self.renders += 1
        return super().render()


class MarkdownTail(Static):
    """The open end of the answer, re-rendered as text arrives."""

    DEFAULT_CSS = """
    MarkdownTail {
        height: auto;
        margin-bottom: 1;
    }
    MarkdownTail.-empty {
        display: none;
    }
    """

    def __init__(self) -> None:
        super().__init__(classes="-empty")
        self.source = ""
        self.updates = 0

    def show(self, source: str, code_theme: str) -> None:
        self.source = source
        self.updates += 1
        empty = not source.strip()
        self.set_class(empty, "-empty")
        self.update("" if empty else AnswerMarkdown(source, code_theme=code_theme))


def group_blocks(blocks: list[Block]) -> list[Block]:
    """Join blocks into groups of about `GROUP_CHARS`; a continued code piece ends one."""
    groups: list[Block] = []
    texts: list[str] = []
    size = 0
    for block in blocks:
        texts.append(block.text)
        size += len(block.text)
        if block.continued or size >= GROUP_CHARS:
            groups.append(Block("\n\n".join(texts), block.continued))
            texts, size = [], 0
    if texts:
        groups.append(Block("\n\n".join(texts)))
    return groups


class AnswerBlock(Widget):
    """The assistant's reply text: finished blocks above one live tail."""

    DEFAULT_CSS = """
    AnswerBlock {
        height: auto;
        padding: 0 1 0 2;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._splitter = MarkdownSplitter()
        self._unflushed: list[str] = []
        self._tail = MarkdownTail()
        self._ended = False
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        """Everything appended so far, flushed or not."""
        return "".join(self._parts)

    def plain_text(self) -> str:
        """The markdown drawn so far: finished blocks, then the tail."""
        sources = [block.source for block in self.blocks]
        return "\n\n".join([*sources, self._tail.source] if self._tail.source else sources)

    @property
    def blocks(self) -> list[MarkdownBlock]:
        return list(self.query_children(MarkdownBlock))

    @property
    def tail(self) -> MarkdownTail:
        return self._tail

    def compose(self) -> ComposeResult:
        yield self._tail

    def append(self, text: str) -> None:
        """Buffer `text`; nothing is parsed or drawn until `flush`."""
        self._unflushed.append(text)
        self._parts.append(text)

    def close(self) -> None:
        """The reply is complete: its last block becomes a finished one at the next flush."""
        self._ended = True

    def flush(self) -> None:
        """Take in the buffered text: mount newly finished blocks, redraw the tail once."""
        # Not attached: not ready for children yet, or the app is shutting down.
        if not (self.is_mounted and self.is_attached):
            return
        text = "".join(self._unflushed)
        self._unflushed.clear()
        finished = self._splitter.feed(text) if text else []
        if self._ended:
            rest = self._splitter.finish()
            if rest:
                finished.append(Block(rest))
        theme = self._code_theme()
        if finished:
            widgets = [MarkdownBlock(g.text, theme, g.continued) for g in group_blocks(finished)]
            self.mount_all(widgets, before=self._tail)
        tail = self._splitter.tail
        if tail != self._tail.source:
            self._tail.show(tail, theme)

    def _code_theme(self) -> str:
        return DARK_CODE_THEME if self.app.current_theme.dark else LIGHT_CODE_THEME
