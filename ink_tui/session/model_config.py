"""Which model to talk to, from flags and the environment.

Flags win over the environment. With neither a base URL nor an API key anywhere, the
built-in offline demo model is used so that `ink` works on a fresh machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ink_tui.core.stream_timeouts import StreamTimeouts

OPENAI_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
# What `ANTHROPIC_API_KEY` alone in the environment talks to.
ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True, slots=True)
class ModelConfig:
    base_url: str | None
    model: str | None
    api_key: str | None = None
    # How long a reply may stay silent or take (config); None: the provider's defaults.
    # Not part of equality: two configs name the same model whatever their patience.
    timeouts: StreamTimeouts | None = field(default=None, compare=False)
    # The API the server speaks: "openai" (chat completions) or "anthropic" (Messages).
    kind: str = "openai"
    # Anthropic's extended thinking: tokens per reply; None: off.
    thinking_budget: int | None = None
    # The model's context window from `[context_windows]`; None: ask the server or use
    # the default for the model's name (core/context_window.py).
    context_window: int | None = field(default=None, compare=False)

    @property
    def is_demo(self) -> bool:
        return self.base_url is None


def resolve_model_config(
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ModelConfig:
    env = os.environ if environ is None else environ
    key = api_key or env.get("INK_API_KEY") or env.get("OPENAI_API_KEY") or None
    url = base_url or env.get("INK_BASE_URL") or env.get("OPENAI_BASE_URL") or None
    chosen_model = model or env.get("INK_MODEL") or None
    if url is None and key is not None:
        url = OPENAI_BASE_URL
    if url is not None:
        url = url.rstrip("/")
    return ModelConfig(base_url=url, model=chosen_model, api_key=key)
