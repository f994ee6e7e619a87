"""A native provider for Anthropic's Messages API (httpx, no SDK).

Everything but the wire format is the OpenAI client's (`openai_compat`): the retries
(429, 529 overloaded and other 5xx, with `retry-after`, only while nothing was shown), the
clock on silences (`StreamWatch`, `Waiting`), the body reader that an abort closes at
once, the readers of a stream, a whole JSON body or an HTML page, and the judgement of a
reply that ended early (`reply_end`): so a malformed stream fails here with the same
messages. This class replaces what differs: the endpoint and headers, the request body
(`anthropic_request`) and the assembly of the reply (`anthropic_reply`).

Extended thinking is on when `thinking_budget` is set (config, or `/thinking` in the app,
which sets the attribute for the next request).
"""

from __future__ import annotations

from typing import Any

from ink_tui.core.abort import AbortSignal
from ink_tui.core.provider_api import ModelRequest
from ink_tui.providers.anthropic_reply import AnthropicReply
from ink_tui.providers.anthropic_request import build_body
from ink_tui.providers.openai_body import Reply
from ink_tui.providers.openai_compat import OpenAICompatProvider

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MODEL = "claude-sonnet-4-5"


class AnthropicProvider(OpenAICompatProvider):
    name: str = "anthropic"
    # Its `/v1/models` names models only; windows come from the config or the defaults.
    lists_context_windows: bool = False

    def __init__(
        self,
        base_url: str,
        model: str | None,
        api_key: str | None,
        *,
        thinking_budget: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__(base_url, model or DEFAULT_MODEL, api_key, **options)
        # Tokens the model may think before answering; None: no extended thinking.
        self.thinking_budget = thinking_budget

    async def resolve_model(self, signal: AbortSignal | None = None) -> str:
        return self.model  # always named: the given one or `DEFAULT_MODEL`

    def _endpoint(self) -> str:
        # The base URL is the API's root ("https://api.anthropic.com"); a "/v1" given
        # with it (as the OpenAI client wants) is not doubled.
        root = self.base_url.removesuffix("/v1")
        return f"{root}/v1/messages"

    def _body(self, model: str, request: ModelRequest) -> dict[str, Any]:
        return build_body(model, request, thinking_budget=self.thinking_budget)

    def _reply(self, model: str, shown: str) -> Reply:
        return AnthropicReply(model, shown, self._redact)

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, "anthropic-version": ANTHROPIC_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers
