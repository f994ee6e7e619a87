"""Cutting output to the line and byte caps: `read` keeps the head, `bash` the tail."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cut:
    lines: list[str]
    # Something was left out (whole lines, or part of a single over-long line).
    truncated: bool
    # The byte cap, rather than the line cap, decided where the cut fell.
    by_bytes: bool
    # A single line was longer than the byte cap and only part of it was kept.
    line_cut: bool

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def split_lines(text: str) -> list[str]:
    """Lines without their "\\n"; a final newline does not start another line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def cut_to_bytes(text: str, max_bytes: int, *, keep_end: bool = False) -> str:
    """At most `max_bytes` of UTF-8 from the start (or end), never splitting a character."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    piece = data[-max_bytes:] if keep_end else data[:max_bytes]
    # A character split at the edge is dropped rather than shown as garbage.
    return piece.decode("utf-8", errors="ignore")


def shorten(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f" … [line cut: {len(text)} chars]"


def keep_head(lines: list[str], max_lines: int, max_bytes: int) -> Cut:
    return _keep(lines, max_lines, max_bytes, from_end=False)


def keep_tail(lines: list[str], max_lines: int, max_bytes: int) -> Cut:
    return _keep(lines, max_lines, max_bytes, from_end=True)


def _keep(lines: list[str], max_lines: int, max_bytes: int, *, from_end: bool) -> Cut:
    ordered = reversed(lines) if from_end else iter(lines)
    kept: list[str] = []
    used = 0
    by_bytes = line_cut = False
    for line in ordered:
        if len(kept) >= max_lines:
            break
        size = len(line.encode("utf-8")) + (1 if kept else 0)
        if used + size > max_bytes:
            by_bytes = True
            if not kept:
                kept.append(cut_to_bytes(line, max_bytes, keep_end=from_end))
                line_cut = True
            break
        kept.append(line)
        used += size
    if from_end:
        kept.reverse()
    truncated = line_cut or len(kept) < len(lines)
    return Cut(kept, truncated, by_bytes and truncated, line_cut)


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
