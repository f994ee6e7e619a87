"""Ending a message built from a piece of text that may already end a sentence.

Messages such as `f"That call failed: {first_line}."` read "was not run.." when the piece
is itself a sentence; `sentence()` adds the full stop only when one is missing.
"""

from __future__ import annotations

# What already ends a sentence (an ellipsis, a closing quote or bracket after one counts).
_ENDINGS = (".", "!", "?", "…", '."', ".)", "?)", "!)", ".'", ".`")


def sentence(text: str) -> str:
    """`text` with a full stop at its end unless it ends a sentence already."""
    stripped = text.rstrip()
    if not stripped or stripped.endswith(_ENDINGS):
        return stripped
    return stripped + "."
