"""How much of a streamed text's end to hold back, lest a secret go out in pieces.

The redactor masks whole strings (`redact.py`); a model's text streams in deltas of a
few characters (`control/held_text.py` holds and joins them). What is held, counted
from the end of the text so far:

- an end that is the start of a known secret ("sk-pr" of "sk-proj-…"), or of a word
  after which a masked value follows (`-----BEGIN `, `bearer `, `authorization`);
- and never a cut through a whole secret: the held end starts before any secret it
  would split;
- a PEM private key block from its BEGIN line until its END line has come (masked as one);
- an Authorization header's or a Bearer token's value while it may still grow (it ends
  at a space, a quote or a newline), up to `TOKEN_MAX` characters.

A held end waits for the stream's next delta, or for its end; nothing held is lost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Words after which a value is masked by pattern (`redact.py`), lower-case.
MARKERS = ("-----begin ", "bearer ", "authorization")
# A token value longer than this goes out as it stands (masked).
TOKEN_MAX = 512
# A PEM header line still arriving is at most this long.
PEM_HEADER_MAX = 64

_PEM_BEGIN = "-----BEGIN "
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")
_WHOLE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.DOTALL
)
# As `redact._AUTH` and `_BEARER`, the value not yet ended (or not yet begun).
_OPEN_TOKEN = re.compile(
    r"(?i)(?:authorization[\"']?\s*(?:[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?[^\s\"',;]*)?"
    r"|\bbearer\s+[A-Za-z0-9\-._~+/]*=*)\Z"
)


def straddling(text: str, secrets: Sequence[str]) -> int:
    """Characters at the end of `text` to hold back (0: all of it may go)."""
    cut = len(text) - max(
        _prefix_end(text, secrets),
        _marker_end(text),
        _open_private_key(text),
        _open_token(text),
    )
    return len(text) - _before_whole_secrets(text, _before_whole_key(text, cut), secrets)


def _prefix_end(text: str, words: Sequence[str]) -> int:
    """The longest end of `text` that is a proper start of one of `words`."""
    best = 0
    for word in words:
        # Only ends longer than the best so far, starting with the word's first character.
        start = max(0, len(text) - len(word) + 1)
        while True:
            start = text.find(word[0], start, len(text) - best)
            if start < 0:
                break
            if word.startswith(text[start:]):
                best = len(text) - start
                break
            start += 1
    return best


def _marker_end(text: str) -> int:
    # Only the end is looked at, and only ASCII: lowering it keeps its length.
    end = text[-max(map(len, MARKERS)) :]
    return _prefix_end(end.lower(), MARKERS) if end.isascii() else 0


def _open_private_key(text: str) -> int:
    start = text.rfind(_PEM_BEGIN)
    if start < 0:
        return 0
    header_end = text.find("-----", start + len(_PEM_BEGIN))
    if header_end < 0:
        # The header is still arriving: it may name a private key.
        return len(text) - start if len(text) - start <= PEM_HEADER_MAX else 0
    header_end += len("-----")
    if not text[start:header_end].endswith("PRIVATE KEY-----"):
        return 0
    if _PEM_END.search(text, header_end) is not None:
        return 0
    return len(text) - start


def _open_token(text: str) -> int:
    end = text[-TOKEN_MAX:]
    folded = end.lower()
    if "authori" not in folded and "bearer" not in folded:
        return 0
    found = _OPEN_TOKEN.search(end)
    return 0 if found is None else len(end) - found.start()


def _before_whole_key(text: str, cut: int) -> int:
    """`cut`, moved back before a whole private key block it would split (its END line
    just came, and its dashes are a marker's start)."""
    if cut == len(text) or "-----END " not in text[max(0, cut - PEM_HEADER_MAX) :]:
        return cut
    start = text.rfind(_PEM_BEGIN, 0, cut)
    if start < 0:
        return cut
    found = _WHOLE_KEY.match(text, start)
    return start if found is not None and found.end() > cut else cut


def _before_whole_secrets(text: str, cut: int, secrets: Sequence[str]) -> int:
    """`cut`, moved back before any secret it would split."""
    moved = True
    while moved:
        moved = False
        for secret in secrets:
            start = text.find(secret, max(0, cut - len(secret) + 1), cut + len(secret) - 1)
            if 0 <= start < cut < start + len(secret):
                cut, moved = start, True
    return cut
