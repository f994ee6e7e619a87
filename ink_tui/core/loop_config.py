"""The agent loop's settings, apart from the loop itself.

Configuration and run settings are read before the first frame; importing `loop` for this
one dataclass would pull in the events, messages, provider API and scheduler there too.
`ink_tui.core.loop` re-exports it, so either import works.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class LoopConfig:
    max_iterations: int = 100
    # How long a tool may take to return after an abort before it is abandoned.
    abort_grace_s: float = 10.0
    max_output_tokens: int | None = None
    # Compact when the next request would fill this share of the model's context window.
    compact_at: float = 0.8
