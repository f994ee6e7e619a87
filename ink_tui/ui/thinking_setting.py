"""`/thinking [N|off]`: the extended-thinking budget of the model in use.

Only a provider that has a `thinking_budget` (Anthropic's) can think on request; the
budget applies from its next request, so also from the next step of a running run.
"""

from __future__ import annotations

from typing import Literal

# The Messages API's smallest budget.
MIN_BUDGET = 1024
USAGE = "/thinking N sets a budget of N tokens (at least 1024); /thinking off turns it off."

Level = Literal["info", "warning"]


def set_thinking(provider: object, argument: str) -> tuple[str, Level, bool]:
    """Apply `/thinking argument` to `provider`: (what to say, its level, whether it worked)."""
    if not hasattr(provider, "thinking_budget"):
        name = getattr(provider, "name", "this provider")
        return (
            f"/thinking sets extended thinking for Anthropic models ([providers.NAME] kind = "
            f'"anthropic"); the model in use ({name}) has no thinking budget.',
            "warning",
            False,
        )
    word = argument.strip().lower().replace("_", "")
    if not word:
        budget = getattr(provider, "thinking_budget", None)
        now = f"{budget} tokens per reply" if budget else "off"
        return f"Thinking: {now}. {USAGE}", "info", True
    if word in ("off", "0", "none", "no"):
        provider.thinking_budget = None
        return "Thinking: off (from the next request).", "info", True
    tokens = _tokens(word)
    if tokens is None or tokens < MIN_BUDGET:
        return f"/thinking {argument.strip()}: {USAGE}", "warning", False
    provider.thinking_budget = tokens
    return f"Thinking: {tokens} tokens per reply (from the next request).", "info", True


def _tokens(word: str) -> int | None:
    """ "8000" or "8k" as a number of tokens; None for anything else."""
    scale = 1000 if word.endswith("k") else 1
    digits = word.removesuffix("k")
    return int(digits) * scale if digits.isascii() and digits.isdigit() else None
