"""Capturing a command's output in bounded memory: the tail in memory, and the whole
output in a file once it outgrows the caps (so a cut result can name where the rest is;
output_files.py says where those files live and when they go)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from ink_tui.core.tool_api import ToolLimits
from ink_tui.tools.output_files import new_output_file, remove_output_file
from ink_tui.tools.truncate import Cut, keep_tail, split_lines


@dataclass(frozen=True, slots=True)
class CapturedOutput:
    cut: Cut
    total_lines: int
    total_bytes: int
    # Where the full output is, when `cut` left part of it out.
    full_output_path: str | None

    @property
    def truncated(self) -> bool:
        return self.cut.truncated


class TailCapture:
    def __init__(self, limits: ToolLimits) -> None:
        self._max_lines = limits.max_lines
        self._max_bytes = limits.max_bytes
        # Twice the byte cap, so the partial line at the buffer's start is never shown.
        self._keep = 2 * limits.max_bytes
        self._tail = bytearray()
        self._newlines = 0
        self._last = b""
        self._spill: IO[bytes] | None = None
        self.total_bytes = 0

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        self._newlines += chunk.count(b"\n")
        self._last = chunk[-1:]
        self._tail += chunk
        if self._spill is not None:
            # Appends of one pipe read to a local temp file land in the page cache; cheap
            # enough for the event loop, and it keeps the bytes in order.
            self._spill.write(chunk)
        elif self.total_bytes > self._max_bytes or self._newlines >= self._max_lines:
            self._spill = new_output_file()
            self._spill.write(self._tail)
        if self._spill is not None and len(self._tail) > 2 * self._keep:
            del self._tail[: -self._keep]

    @property
    def buffered_bytes(self) -> int:
        """Bytes held in memory right now (bounded by a few times the byte cap)."""
        return len(self._tail)

    @property
    def total_lines(self) -> int:
        return self._newlines + (1 if self.total_bytes and self._last != b"\n" else 0)

    def finish(self) -> CapturedOutput:
        """The tail within the caps; the temp file is kept only if something was cut."""
        cut = keep_tail(
            split_lines(self._tail.decode("utf-8", errors="replace")),
            self._max_lines,
            self._max_bytes,
        )
        path: str | None = None
        if self._spill is not None:
            self._spill.close()
            if cut.truncated:
                path = self._spill.name
            else:
                remove_output_file(self._spill.name)
            self._spill = None
        return CapturedOutput(cut, self.total_lines, self.total_bytes, path)

    def discard(self) -> None:
        """Drop the temp file (when the run failed before a result could name it)."""
        if self._spill is not None:
            self._spill.close()
            remove_output_file(self._spill.name)
            self._spill = None
