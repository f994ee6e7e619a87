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
from bisect import bisect_right
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
    return Straddle(secrets)(text)


class Straddle:
    """`straddling` for one list of secrets, made ready once (the redactor keeps one)."""

    __slots__ = ("_ends", "_secrets")

    def __init__(self, secrets: Sequence[str]) -> None:
        self._secrets = tuple(secrets)
        self._ends = _starts_by_last_char(self._secrets)

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        hold = max(
            _longest_start(text, self._ends),
            _marker_end(text),
            _open_private_key(text) if _PEM_BEGIN in text else 0,
            _open_token(text),
        )
        if not hold:
            # Nothing held: no secret can straddle the end of the text itself.
            return 0
        cut = len(text) - hold
        return len(text) - _before_whole_secrets(text, _before_whole_key(text, cut), self._secrets)


# A word's proper starts, by their last character: their lengths (ascending) and, at
# the same place, the word each is a start of.
Starts = dict[str, tuple[list[int], list[str]]]


def _starts_by_last_char(words: Sequence[str]) -> Starts:
    """Where an end of a text may be a proper start of one of `words`: the end's last
    character is the start's, so only those starts are compared."""
    found: dict[str, list[tuple[int, str]]] = {}
    for word in words:
        for length in range(1, len(word)):
            found.setdefault(word[length - 1], []).append((length, word))
    starts: Starts = {}
    for char, pairs in found.items():
        pairs.sort(key=lambda pair: pair[0])
        starts[char] = ([length for length, _ in pairs], [word for _, word in pairs])
    return starts


def _longest_start(text: str, starts: Starts) -> int:
    """The longest end of non-empty `text` that is a proper start of one of the words."""
    found = starts.get(text[-1])
    if found is None:
        return 0
    lengths, words = found
    # Longest first, and none longer than the text itself.
    for index in range(bisect_right(lengths, len(text)) - 1, -1, -1):
        length = lengths[index]
        if text.endswith(words[index][:length]):
            return length
    return 0


_MARKER_STARTS = _starts_by_last_char(MARKERS)
_MARKER_LENGTH = max(map(len, MARKERS))


def _marker_end(text: str) -> int:
    # Only the end is looked at, and only ASCII: lowering it keeps its length.
    end = text[-_MARKER_LENGTH:]
    return _longest_start(end.lower(), _MARKER_STARTS) if end.isascii() else 0


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
