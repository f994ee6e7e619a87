"""The model in use: which endpoint and model, why, and where its key comes from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ink_tui.session.api_keys import ApiKey
from ink_tui.session.model_config import ModelConfig

if TYPE_CHECKING:
    from ink_tui.core.stream_timeouts import StreamTimeouts


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """Which endpoint and model to use, why, and where its key comes from."""

    provider: str | None
    base_url: str | None
    model: str | None
    model_source: str
    base_url_source: str
    api_key: ApiKey | None = None
    # Why there is no key, when that is worth saying ("API key file … is readable …").
    key_note: str | None = None
    # What picked the provider: the model choice, or a base_url equal to the provider's.
    provider_source: str = ""
    timeouts: StreamTimeouts | None = None
    kind: str = "openai"
    thinking_budget: int | None = None
    # From `[context_windows]`; None: the server's value or the model's default.
    context_window: int | None = None

    @property
    def is_demo(self) -> bool:
        return self.base_url is None

    @property
    def label(self) -> str:
        if self.is_demo:
            return "demo"
        if self.provider and self.model:
            return f"{self.provider}/{self.model}"
        return self.model or self.provider or str(self.base_url)

    @property
    def api_key_status(self) -> str:
        if self.api_key is not None:
            return self.api_key.describe()
        return self.key_note or "not set"

    def model_config(self) -> ModelConfig:
        key = None if self.api_key is None else self.api_key.value
        return ModelConfig(
            base_url=self.base_url,
            model=self.model,
            api_key=key,
            timeouts=self.timeouts,
            context_window=self.context_window,
            kind=self.kind,
            thinking_budget=self.thinking_budget,
        )
