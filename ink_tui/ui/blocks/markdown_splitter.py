"""Split streamed markdown into finished top-level blocks and one open tail.

Pure and incremental, so the answer widget can render each finished block once and
re-render only the tail as text arrives. A block ends at a blank line outside a fenced
code block; a fence (``` or ~~~) stays open until its closing fence, blank lines and all.
Splitting is deliberately coarser than CommonMark: a list whose items are separated by
blank lines comes out as several blocks, which renders the same way.

A long fenced code block is cut into pieces of at most `CODE_CHUNK_LINES` lines (or
`CODE_CHUNK_CHARS` characters), each closed and reopened with the same fence and marked
`continued`: otherwise a model writing a whole file in one fence would make the open tail,
re-highlighted every frame, grow without bound. Highlighting restarts at each cut, which
can misread a multi-line string that spans one; that is the price.

Cost is linear in the text fed: a piece without a newline is only appended to a list,
and complete lines are looked at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CODE_CHUNK_LINES = 40
CODE_CHUNK_CHARS = 4096

# Any indentation is accepted: fences nested in list items are indented by the item's
# width, and missing one would let a blank line inside the code split it.
_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True, slots=True)
class Block:
    """A finished top-level block: its markdown will never change."""

    text: str
    # A piece of a long fenced code block; the next block carries on with its code.
    continued: bool = False


@dataclass(frozen=True, slots=True)
class _Fence:
    char: str
    length: int
    opening_line: str

    @property
    def closing_line(self) -> str:
        return self.char * self.length


def _opens_fence(line: str) -> _Fence | None:
    match = _FENCE_OPEN.match(line)
    if match is None:
        return None
    fence = match["fence"]
    # A backtick "fence" whose info string holds a backtick is inline code (CommonMark).
    if fence[0] == "`" and "`" in match["info"]:
        return None
    return _Fence(fence[0], len(fence), line)


def _closes_fence(line: str, fence: _Fence) -> bool:
    stripped = line.strip()
    return len(stripped) >= fence.length and stripped == fence.char * len(stripped)


class MarkdownSplitter:
    """Feed text as it streams; get back the blocks that can no longer change."""

    def __init__(self) -> None:
        # Complete lines (without their newline) of the block still open.
        self._lines: list[str] = []
        # Pieces of the current line, not yet ended by a newline.
        self._partial: list[str] = []
        self._fence: _Fence | None = None
        # Characters of code in `_lines` since the fence opened or was last cut.
        self._code_chars = 0

    @property
    def in_fence(self) -> bool:
        return self._fence is not None

    def feed(self, text: str) -> list[Block]:
        """Add streamed text; return the blocks it finished, in order (often none)."""
        if "\n" not in text:
            if text:
                self._partial.append(text)
            return []
        pieces = text.split("\n")
        pieces[0] = "".join(self._partial) + pieces[0]
        self._partial.clear()
        finished: list[Block] = []
        for line in pieces[:-1]:
            self._take_line(line, finished)
        if pieces[-1]:
            self._partial.append(pieces[-1])
        return finished

    @property
    def tail(self) -> str:
        """The open block as it stands: what the next `feed` may still change."""
        partial = "".join(self._partial)
        if not self._lines:
            return partial
        return "\n".join(self._lines) + ("\n" + partial if partial else "")

    def finish(self) -> str:
        """End of stream: return the open block (maybe empty) and start afresh."""
        rest = self.tail
        self._lines.clear()
        self._partial.clear()
        self._fence = None
        self._code_chars = 0
        return rest if rest.strip() else ""

    def _take_line(self, line: str, finished: list[Block]) -> None:
        fence = self._fence
        if fence is not None:
            if _closes_fence(line, fence):
                self._fence = None
            elif self._code_chars >= CODE_CHUNK_CHARS or len(self._lines) > CODE_CHUNK_LINES:
                # Cut before this line: close the piece, reopen the same fence after it.
                finished.append(Block("\n".join([*self._lines, fence.closing_line]), True))
                self._lines = [fence.opening_line]
                self._code_chars = 0
            self._lines.append(line)
            self._code_chars += len(line) + 1
            return
        if not line.strip():
            # Blank lines between blocks are dropped: the widget spaces the blocks.
            if self._lines:
                finished.append(Block("\n".join(self._lines)))
                self._lines = []
            return
        self._fence = _opens_fence(line)
        self._code_chars = 0
        self._lines.append(line)


def split_markdown(text: str) -> tuple[list[Block], str]:
    """The whole text at once: its finished blocks and the open tail."""
    splitter = MarkdownSplitter()
    blocks = splitter.feed(text)
    return blocks, splitter.tail
