"""The Anthropic provider in use: chosen by config or by ANTHROPIC_API_KEY alone, a tool
call round trip through the run controller, and a real `ink -p` process configured with
`[providers.anthropic] kind = "anthropic"`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink_tui.assemble import make_provider
from ink_tui.control.controller import RunController
from ink_tui.core.messages import AssistantMessage, ToolResultMessage
from ink_tui.providers.anthropic import AnthropicProvider
from ink_tui.providers.openai_compat import OpenAICompatProvider
from ink_tui.session.config import Config, load_config
from ink_tui.tools import default_tools
from tests.run_helpers import Recorder
from tests.scripted_anthropic_server import ScriptedAnthropicServer, text_reply, tool_reply

MODEL_VARIABLES = {
    "INK_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "INK_BASE_URL",
    "OPENAI_BASE_URL",
    "INK_MODEL",
}


@pytest.fixture
def anthropic() -> Iterator[ScriptedAnthropicServer]:
    server = ScriptedAnthropicServer()
    try:
        yield server
    finally:
        server.close()


def load(tmp_path: Path, text: str = "", environ: dict[str, str] | None = None) -> Config:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    user = tmp_path / "user.toml"
    user.write_text(text)
    return load_config(workspace, environ=environ or {}, user_config_path=user)


# -- choosing it --------------------------------------------------------------------------


def test_anthropic_api_key_alone_picks_anthropic_with_a_default_model(tmp_path: Path) -> None:
    config = load(tmp_path, environ={"ANTHROPIC_API_KEY": "sk-ant-1"})
    assert config.model_errors == [] and config.problems == []
    model = config.model_config()
    assert (model.kind, model.base_url, model.model) == (
        "anthropic",
        "https://api.anthropic.com",
        "claude-sonnet-4-5",
    )
    assert model.api_key == "sk-ant-1"
    assert config.model.api_key_status == "set (from env ANTHROPIC_API_KEY)"
    assert isinstance(make_provider(model, tmp_path), AnthropicProvider)


@pytest.mark.parametrize("generic", ["INK_API_KEY", "OPENAI_API_KEY"])
def test_the_openai_keys_keep_their_meaning_next_to_an_anthropic_key(
    tmp_path: Path, generic: str
) -> None:
    config = load(tmp_path, environ={"ANTHROPIC_API_KEY": "sk-ant-1", generic: "sk-1"})
    model = config.model_config()
    assert (model.kind, model.base_url, model.api_key) == (
        "openai",
        "https://api.openai.com/v1",
        "sk-1",
    )
    provider = make_provider(model, tmp_path)
    assert type(provider) is OpenAICompatProvider


def test_a_provider_of_kind_anthropic_with_a_thinking_budget(tmp_path: Path) -> None:
    text = """
[providers.anthropic]
kind = "anthropic"
base_url = "https://api.anthropic.com"
api_key_env = "MY_ANTHROPIC_KEY"
models = ["claude-opus-4-1", "claude-sonnet-4-5"]
thinking_budget = 8000
"""
    config = load(tmp_path, text, {"MY_ANTHROPIC_KEY": "sk-ant-2"})
    assert config.problems == []
    model = config.model_config()
    assert (model.kind, model.model, model.api_key, model.thinking_budget) == (
        "anthropic",
        "claude-opus-4-1",
        "sk-ant-2",
        8000,
    )
    provider = make_provider(model, tmp_path)
    assert isinstance(provider, AnthropicProvider) and provider.thinking_budget == 8000
    assert config.model_config("anthropic/claude-sonnet-4-5").kind == "anthropic"


def test_a_wrong_kind_or_budget_is_named_and_ignored(tmp_path: Path) -> None:
    text = """
[providers.x]
kind = "gemini"
base_url = "http://localhost:1/v1"
thinking_budget = 10
"""
    config = load(tmp_path, text)
    problems = "\n".join(config.problems)
    assert "providers.x.kind" in problems and "'openai', 'anthropic'" in problems
    assert "providers.x.thinking_budget" in problems and ">= 1024" in problems
    assert config.model_config().kind == "openai"


# -- through the run controller -----------------------------------------------------------


async def test_a_tool_call_round_trip_through_the_controller(
    anthropic: ScriptedAnthropicServer, workspace: Path
) -> None:
    anthropic.push(
        tool_reply([("read", {"path": "README.md"}, "toolu_r1")], text="Reading."),
        text_reply("A tiny project for tests."),
    )
    provider = AnthropicProvider(anthropic.base_url, "claude-test", "sk-ant-test")
    controller = RunController(
        provider=provider,
        tools=default_tools(),
        workspace=workspace,
        system_prompt="You are a test.",
    )
    recorder = Recorder()
    controller.bus.subscribe(recorder)
    try:
        controller.submit("what is this?")
        await controller.wait_idle()
    finally:
        await provider.aclose()
    assert recorder.of("run_end")[-1].stop_reason == "completed"
    [call, answer] = [m for m in controller.history if isinstance(m, AssistantMessage)]
    assert call.tool_calls[0].arguments == {"path": "README.md"}
    assert answer.text == "A tiny project for tests."
    [result] = [m for m in controller.history if isinstance(m, ToolResultMessage)]
    assert "A tiny project for tests." in result.content and not result.is_error
    second = anthropic.requests[1]
    assert second["messages"][1]["content"][-1] == {
        "type": "tool_use",
        "id": "toolu_r1",
        "name": "read",
        "input": {"path": "README.md"},
    }
    [sent] = second["messages"][2]["content"]
    assert sent["type"] == "tool_result" and sent["tool_use_id"] == "toolu_r1"
    assert "A tiny project for tests." in sent["content"]
    assert sent["cache_control"] == {"type": "ephemeral"}


# -- a real `ink -p` ----------------------------------------------------------------------


def test_ink_p_with_a_provider_of_kind_anthropic(
    anthropic: ScriptedAnthropicServer, workspace: Path, tmp_path: Path
) -> None:
    config_home = tmp_path / "config"
    (config_home / "ink").mkdir(parents=True)
    (config_home / "ink" / "config.toml").write_text(
        f"""
default_model = "anthropic/claude-test"

[providers.anthropic]
kind = "anthropic"
base_url = "{anthropic.base_url}"
api_key_env = "ANTHROPIC_API_KEY"
models = ["claude-test"]
thinking_budget = 2000
"""
    )
    anthropic.push(
        tool_reply([("read", {"path": "sum.py"}, "toolu_1")], thinking="Read it first."),
        text_reply("It sums a list."),
    )
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        XDG_CONFIG_HOME=str(config_home),
        XDG_DATA_HOME=str(tmp_path / "data"),
        ANTHROPIC_API_KEY="sk-ant-proc",
    )
    done = subprocess.run(
        [sys.executable, "-m", "ink_tui", "-p", "what does sum.py do?"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("It sums a list.")
    assert len(anthropic.requests) == 2
    headers = {k.lower(): v for k, v in anthropic.request_headers[0].items()}
    assert headers["x-api-key"] == "sk-ant-proc"
    first, second = anthropic.requests
    assert first["model"] == "claude-test"
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert second["messages"][1]["content"][0]["type"] == "thinking"
    assert "def total" in second["messages"][2]["content"][0]["content"]
