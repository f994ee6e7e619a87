"""A model's context window from the server's `/models`, when the config and the table of
well-known names do not know it (issue 12: "a value from /v1/models when the server
gives one")."""

from __future__ import annotations

from typing import Any

import pytest

from ink_tui.core.abort import AbortController
from ink_tui.core.context_window import window_of
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import ModelRequest, ReplyDone
from ink_tui.providers.model_listing import listed_context_window
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.scripted_server import ScriptedServer, text_reply

REQUEST = ModelRequest(system_prompt="s", messages=[UserMessage("hi")], tools=[])


async def ask(provider: OpenAICompatProvider) -> None:
    events = [e async for e in provider.stream(REQUEST, AbortController().signal)]
    assert isinstance(events[-1], ReplyDone)


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "local-model", "max_model_len": 32768},  # vLLM
        {"id": "local-model", "context_length": 32768},  # OpenRouter
        {"id": "local-model", "top_provider": {"context_length": 32768}},
        {"id": "local-model", "max_context_length": 32768},  # LM Studio
        {"id": "local-model", "meta": {"n_ctx_train": 32768}},  # llama.cpp
    ],
)
async def test_a_listed_window_is_learned_once(
    server: ScriptedServer, entry: dict[str, Any]
) -> None:
    server.models_listing = {"data": [{"id": "other", "context_length": 8}, entry]}
    server.push(text_reply("one"), text_reply("two"))
    provider = OpenAICompatProvider(server.base_url, "local-model", None)
    try:
        await ask(provider)
        await ask(provider)
    finally:
        await provider.aclose()
    assert provider.context_window == 32768 and window_of(provider) == 32768
    assert server.model_listings == 1


async def test_a_known_or_configured_window_asks_nothing(server: ScriptedServer) -> None:
    server.push(text_reply("one"), text_reply("two"))
    known = OpenAICompatProvider(server.base_url, "gpt-4.1-mini", None)
    configured = OpenAICompatProvider(server.base_url, "local-model", None)
    configured.context_window = 4096
    try:
        await ask(known)
        await ask(configured)
    finally:
        await known.aclose()
        await configured.aclose()
    assert server.model_listings == 0
    assert configured.context_window == 4096


async def test_a_server_that_says_nothing_leaves_it_unknown(server: ScriptedServer) -> None:
    server.models_listing = {"object": "list"}  # not a listing at all
    server.push(text_reply("fine"))
    provider = OpenAICompatProvider(server.base_url, "local-model", None)
    try:
        await ask(provider)
    finally:
        await provider.aclose()
    assert provider.context_window is None and window_of(provider) is None
    assert server.model_listings == 1


async def test_the_listing_that_names_the_model_also_gives_its_window(
    server: ScriptedServer,
) -> None:
    server.models_listing = {"data": [{"id": "first-listed", "max_model_len": 65536}]}
    server.push(text_reply("fine"))
    provider = OpenAICompatProvider(server.base_url, None, None)
    try:
        await ask(provider)
    finally:
        await provider.aclose()
    assert provider.model == "first-listed" and provider.context_window == 65536
    assert server.model_listings == 1


def test_odd_values_are_not_windows() -> None:
    listing = {"data": [{"id": "m", "context_length": True, "max_model_len": "big"}]}
    assert listed_context_window(listing, "m") is None
    assert listed_context_window({"data": "nope"}, "m") is None
