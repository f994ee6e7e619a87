"""`/thinking [N|off]`: the Anthropic model's thinking budget, set in the running app."""

from __future__ import annotations

from pathlib import Path

from ink_tui.providers.anthropic import AnthropicProvider
from ink_tui.providers.openai_compat import OpenAICompatProvider
from ink_tui.ui.thinking_setting import set_thinking
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_anthropic_server import ScriptedAnthropicServer, text_reply
from tests.scripted_server import ScriptedServer
from tests.ui_helpers import make_app, type_text, wait_until


def test_budget_set_shown_and_turned_off() -> None:
    provider = AnthropicProvider("http://127.0.0.1:9", "claude-test", None)
    assert set_thinking(provider, "8000")[1:] == ("info", True)
    assert provider.thinking_budget == 8000
    assert set_thinking(provider, "")[0].startswith("Thinking: 8000 tokens per reply.")
    set_thinking(provider, "16k")
    assert provider.thinking_budget == 16000
    assert set_thinking(provider, "off")[0] == "Thinking: off (from the next request)."
    assert provider.thinking_budget is None


def test_a_bad_budget_is_refused_and_changes_nothing() -> None:
    provider = AnthropicProvider("http://127.0.0.1:9", "claude-test", None, thinking_budget=4096)
    for argument in ("12", "lots", "-5", "1e4"):
        message, level, worked = set_thinking(provider, argument)
        assert (level, worked) == ("warning", False)
        assert "at least 1024" in message
    assert provider.thinking_budget == 4096


def test_a_provider_without_thinking_says_so() -> None:
    provider = OpenAICompatProvider("http://127.0.0.1:9/v1", "m", None)
    message, level, worked = set_thinking(provider, "8000")
    assert (level, worked) == ("warning", False)
    assert "Anthropic" in message and not hasattr(provider, "thinking_budget")


async def test_thinking_command_in_the_app_reaches_the_next_request(
    server: ScriptedServer, workspace: Path
) -> None:
    anthropic = ScriptedAnthropicServer()
    anthropic.push(text_reply("thought about it"))
    app, _ = make_app(server, workspace)
    try:
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_until(pilot, lambda: app.controller is not None)
            old = app.controller.provider
            app.controller.provider = AnthropicProvider(anthropic.base_url, "claude-test", "k")
            await old.aclose()
            await type_text(pilot, "/thinking 12")
            await pilot.press("enter")
            await pilot.pause()
            transcript = app.query_one(Transcript)
            assert "/thinking 12: /thinking N sets a budget" in transcript.plain_text()
            assert app.prompt.text == "/thinking 12"  # given back to fix
            app.prompt.clear()
            await type_text(pilot, "/thinking 3000")
            await pilot.press("enter")
            await pilot.pause()
            assert "Thinking: 3000 tokens per reply" in transcript.plain_text()
            await type_text(pilot, "think")
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(anthropic.requests) == 1)
            await app.controller.wait_idle()
            await app.controller.provider.aclose()
    finally:
        anthropic.close()
    assert anthropic.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 3000}
