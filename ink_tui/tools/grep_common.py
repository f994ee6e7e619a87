"""What both grep backends share: the query, and the capped list of matching lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ink_tui.tools.paths import display_path
from ink_tui.tools.truncate import shorten

# Matching lines longer than this are cut (minified files would flood the output).
MAX_LINE_CHARS = 500


@dataclass(frozen=True, slots=True)
class GrepQuery:
    pattern: str
    # Resolved file or directory to search.
    target: Path
    workspace: Path
    glob: str | None
    ignore_case: bool


@dataclass(slots=True)
class GrepMatches:
    """Formatted matching lines ("path:line: text"), stopping at the caps."""

    workspace: Path
    max_matches: int
    max_bytes: int
    lines: list[str] = field(default_factory=list)
    # A match beyond the caps was seen and left out.
    capped: bool = False
    _bytes: int = 0

    def add(self, path: Path, line_number: int, text: str) -> bool:
        """Record one match; False once the caps are reached (the search should stop)."""
        if text.endswith("\r"):
            text = text[:-1]
        line = f"{display_path(self.workspace, path)}:{line_number}: "
        line += shorten(text, MAX_LINE_CHARS)
        size = len(line.encode("utf-8")) + 1
        if len(self.lines) >= self.max_matches or self._bytes + size > self.max_bytes:
            self.capped = True
            return False
        self.lines.append(line)
        self._bytes += size
        return True
