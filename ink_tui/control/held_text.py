"""Streamed text masked across its deltas, for the public event projection.

Masking works on whole strings, and a model streams text in pieces of a few characters:
a secret it repeats (a key read from a file) arrives as "sk-pr" then "oj-1234…", and
neither piece holds it. So the end of each delta that could be the start of a secret
(`hold`: how many trailing characters are) is held back, and goes out at the front of
the stream's next delta, masked with it, or on its own when the stream ends (`release`).
Most deltas end with nothing held; a held end waits one delta.

A stream is one agent's text or thinking (a sub-agent's are its own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

Kind = Literal["text", "thinking"]
# Whose stream: the agent (None: the main one) and the kind of text.
StreamKey = tuple[str | None, Kind]


class HeldText:
    def __init__(self, mask: Callable[[str], str], hold: Callable[[str], int]) -> None:
        self._mask = mask
        self._hold = hold
        self._held: dict[StreamKey, str] = {}

    def take(self, key: StreamKey, text: str) -> str:
        """What of the stream may go out now: masked, less an end that may begin a secret."""
        # Held as the model sent it, so that the next delta completes it; `hold` never
        # cuts through a whole secret, so what goes now is masked as it would be whole.
        whole = self._held.pop(key, "") + text
        held = self._hold(whole)
        if held:
            self._held[key] = whole[-held:]
            whole = whole[:-held]
        return self._mask(whole)

    @property
    def holding(self) -> bool:
        """Whether any stream's end is held."""
        return bool(self._held)

    def release(self, agent_id: str | None, *, but: str | None = None) -> list[tuple[Kind, str]]:
        """The agent's streams (of every kind `but` one) ended or paused: (kind, text)
        of what each held, masked."""
        keys = [key for key in self._held if key[0] == agent_id and key[1] != but]
        return [(key[1], self._mask(self._held.pop(key))) for key in keys]
