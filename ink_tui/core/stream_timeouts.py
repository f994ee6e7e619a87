"""How long a model request may stay quiet, in a module of its own: configuration builds
one before the first frame, when nothing else of the provider API is needed yet."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StreamTimeouts:
    """How long one model request may stay quiet, and last, before it is given up.

    `first_byte_s` runs from sending the request to the first byte of the reply's body
    (a local model may load and read the prompt for minutes first); `idle_s` is the
    longest gap between two reads after that; `attempt_s` bounds one attempt whole.
    """

    first_byte_s: float = 120.0
    idle_s: float = 60.0
    attempt_s: float = 600.0
    # A silence this long is reported (`Waiting`), then again every `notice_every_s`.
    notice_after_s: float = 3.0
    notice_every_s: float = 1.0
