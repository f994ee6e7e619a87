"""What a model's tokens cost: a few well-known models' prices, and `[prices]` in config.

Prices are in US dollars per million tokens: input, output, and cached input read back
("cache_read"; where the provider reports cached tokens, they are part of the input
count). A model whose price is not known has no cost at all: the status bar and
/status never show a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ink_tui.core.messages import Usage


@dataclass(frozen=True, slots=True)
class Price:
    input: float
    """Dollars per million input tokens (uncached)."""
    output: float
    """Dollars per million output tokens (reasoning included)."""
    cache_read: float | None = None
    """Dollars per million cached input tokens; None: charged as input."""


# Prefixes of well-known model names (lower case, after any "vendor/" part) and their
# list prices, as published on OpenAI's and Anthropic's pricing pages in late 2025. They
# change: `[prices]` in the config overrides them. The first match wins, so a longer
# prefix comes before a shorter one. Anthropic's cache writes (charged more) are not
# reported apart and count as input.
KNOWN_PRICES: tuple[tuple[str, Price], ...] = (
    ("gpt-4.1-mini", Price(0.40, 1.60, 0.10)),
    ("gpt-4.1-nano", Price(0.10, 0.40, 0.025)),
    ("gpt-4.1", Price(2.00, 8.00, 0.50)),
    ("gpt-4o-mini", Price(0.15, 0.60, 0.075)),
    ("gpt-4o", Price(2.50, 10.00, 1.25)),
    ("o3-mini", Price(1.10, 4.40, 0.55)),
    ("o4-mini", Price(1.10, 4.40, 0.275)),
    ("o3", Price(2.00, 8.00, 0.50)),
    ("claude-opus-4-5", Price(5.00, 25.00, 0.50)),
    ("claude-opus-4", Price(15.00, 75.00, 1.50)),
    ("claude-sonnet-4", Price(3.00, 15.00, 0.30)),
    ("claude-3-5-haiku", Price(0.80, 4.00, 0.08)),
)


def price_for(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model`: `[prices]` (by its full name, then the name after any
    "vendor/" part), else a well-known model's by prefix; None when not known."""
    name = model.strip()
    bare = name.lower().rsplit("/", 1)[-1]
    for key in (name, name.rsplit("/", 1)[-1]):
        if overrides and key in overrides:
            return overrides[key]
    for prefix, price in KNOWN_PRICES:
        if bare.startswith(prefix):
            return price
    return None


def cost_of(usage: Usage, price: Price) -> float:
    """The dollars `usage` cost at `price`."""
    cached = min(usage.cached_tokens, usage.input_tokens)
    cache_rate = price.input if price.cache_read is None else price.cache_read
    return (
        (usage.input_tokens - cached) * price.input
        + cached * cache_rate
        + usage.output_tokens * price.output
    ) / 1_000_000


def format_cost(dollars: float) -> str:
    """ "$0.042", "$1.27"; "<$0.001" for a little more than nothing."""
    if 0 < dollars < 0.001:
        return "<$0.001"
    return f"${dollars:.3f}" if dollars < 1 else f"${dollars:.2f}"
