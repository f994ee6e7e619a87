"""Unified diffs of a file's old and new text, for results and the UI."""

from __future__ import annotations

import difflib


def unified_diff(old: str, new: str, shown: str, context: int = 3) -> str:
    # Line endings are normalised so a CRLF file shows a readable diff, not stray "\r"s.
    before = old.replace("\r\n", "\n").split("\n")
    after = new.replace("\r\n", "\n").split("\n")
    lines = difflib.unified_diff(before, after, f"a/{shown}", f"b/{shown}", n=context, lineterm="")
    return "\n".join(lines)
