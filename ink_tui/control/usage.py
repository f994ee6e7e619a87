"""The tokens a session used, and what they cost.

Usage belongs to the session, not to the process: /new starts it at zero, and resuming
a session (`ink -c`, `ink -r`, /resume) starts it at the sum of the usage its file
recorded with every reply. The cost is known only when every reply that used tokens
came from a model whose price is known (`core/prices.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ink_tui.core.messages import AssistantMessage
from ink_tui.core.prices import Price, cost_of, format_cost, price_for


@dataclass(slots=True)
class SessionUsage:
    prices: Mapping[str, Price] = field(default_factory=dict)
    """`[prices]` from the config: model name -> price."""
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    """Dollars, over the replies whose price is known."""
    unpriced: set[str] = field(default_factory=set)
    """Models that used tokens without a known price: then there is no cost."""

    def add(self, message: AssistantMessage) -> None:
        usage = message.usage
        if not (usage.input_tokens or usage.output_tokens):
            return
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_tokens += usage.cached_tokens
        price = price_for(message.model, self.prices)
        if price is None:
            self.unpriced.add(message.model or "?")
        else:
            self.cost += cost_of(usage, price)

    def restart(self, replies: Iterable[AssistantMessage] = ()) -> None:
        """Start again: at zero (/new), or at the sum of a resumed session's replies."""
        self.input_tokens = self.output_tokens = self.cached_tokens = 0
        self.cost = 0.0
        self.unpriced.clear()
        for reply in replies:
            self.add(reply)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost_known(self) -> bool:
        return self.total_tokens > 0 and not self.unpriced

    def cost_label(self) -> str:
        """ "$0.042"; "" when nothing was used or a price is not known."""
        return format_cost(self.cost) if self.cost_known else ""
