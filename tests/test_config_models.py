"""Which provider, URL, model and key are used, from flags, environment and config files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from ink_tui.session.config import Config, load_config
from ink_tui.session.model_config import OPENAI_BASE_URL, resolve_model_config

PROVIDERS = """
[providers.openrouter]
base_url = "https://openrouter.ai/api/v1/"
api_key_env = "OPENROUTER_API_KEY"
models = ["anthropic/claude-x", "openai/gpt-5"]

[providers.local]
base_url = "http://localhost:11434/v1"
models = ["llama3", "qwen"]
"""


def load(
    tmp_path: Path,
    user_text: str = "",
    *,
    environ: dict[str, str] | None = None,
    flags: Mapping[str, object] | None = None,
    workspace_text: str | None = None,
) -> Config:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    user = tmp_path / "user.toml"
    user.write_text(user_text)
    if workspace_text is not None:
        (workspace / ".ink").mkdir(exist_ok=True)
        (workspace / ".ink" / "config.toml").write_text(workspace_text)
    # The workspace file as a trusted one applies (tests/test_project_trust.py: untrusted).
    return load_config(
        workspace,
        flags=flags or {},
        environ=environ or {},
        user_config_path=user,
        trust_project=True,
    )


@pytest.mark.parametrize(
    ("environ", "flags"),
    [
        ({}, {}),
        ({"OPENAI_API_KEY": "k1"}, {}),
        ({"INK_API_KEY": "k2", "OPENAI_API_KEY": "k1", "INK_MODEL": "m"}, {}),
        ({"INK_BASE_URL": "http://h/v1/", "OPENAI_BASE_URL": "http://o/v1"}, {"model": "x"}),
        ({"OPENAI_BASE_URL": "http://o/v1"}, {"api_key": "k3"}),
        ({"INK_API_KEY": "k2"}, {"base_url": "http://f/v1", "model": "y", "api_key": "k3"}),
        ({}, {"model": "only-a-model"}),
    ],
)
def test_without_config_files_flags_and_env_behave_as_before(
    tmp_path: Path, environ: dict[str, str], flags: dict[str, str]
) -> None:
    config = load(tmp_path, environ=environ, flags=flags)
    assert config.model_config() == resolve_model_config(**flags, environ=environ)


def test_no_url_and_no_key_anywhere_is_the_demo(tmp_path: Path) -> None:
    config = load(tmp_path)
    assert config.model.is_demo
    assert config.model_config().base_url is None
    assert config.available_models() == []


def test_default_model_picks_a_configured_provider(tmp_path: Path) -> None:
    text = 'default_model = "local/qwen"\n' + PROVIDERS
    config = load(tmp_path, text, environ={"OPENAI_API_KEY": "sk-openai"})
    choice = config.model
    assert (choice.provider, choice.base_url, choice.model) == (
        "local",
        "http://localhost:11434/v1",
        "qwen",
    )
    assert choice.model_source == f"default_model (user config {tmp_path / 'user.toml'})"
    # The OpenAI key is not sent to a provider that is not OpenAI.
    assert choice.api_key is None


def test_bare_default_model_uses_the_provider_setting(tmp_path: Path) -> None:
    text = 'provider = "openrouter"\ndefault_model = "openai/gpt-5"\n' + PROVIDERS
    config = load(tmp_path, text, environ={"OPENROUTER_API_KEY": "sk-or"})
    assert (config.model.provider, config.model.model) == ("openrouter", "openai/gpt-5")
    assert config.model.base_url == "https://openrouter.ai/api/v1"
    assert config.model_config().api_key == "sk-or"
    assert config.model.api_key_status == "set (from env OPENROUTER_API_KEY)"


def test_model_flag_matching_a_provider_model_uses_that_provider(tmp_path: Path) -> None:
    text = 'default_model = "openrouter/openai/gpt-5"\n' + PROVIDERS
    config = load(tmp_path, text, flags={"model": "llama3"})
    assert (config.model.provider, config.model.model) == ("local", "llama3")
    assert config.model.model_source == "flag --model"


def test_model_flag_with_provider_prefix(tmp_path: Path) -> None:
    config = load(tmp_path, PROVIDERS, environ={"INK_MODEL": "openrouter/anthropic/claude-x"})
    assert (config.model.provider, config.model.model) == ("openrouter", "anthropic/claude-x")
    assert config.model.model_source == "env INK_MODEL"


def test_base_url_flag_wins_over_default_model(tmp_path: Path) -> None:
    text = 'default_model = "local/qwen"\n' + PROVIDERS
    config = load(tmp_path, text, flags={"base_url": "http://other/v1", "model": "local/qwen"})
    assert config.model.base_url == "http://other/v1"
    assert config.model.model == "local/qwen"
    assert config.model.provider is None
    assert config.model.base_url_source == "flag --base-url"


def test_provider_without_default_model_takes_its_first_model(tmp_path: Path) -> None:
    config = load(tmp_path, 'provider = "local"\n' + PROVIDERS)
    assert (config.model.provider, config.model.model) == ("local", "llama3")
    assert config.model.model_source == "first model of provider 'local'"


def test_unknown_provider_in_default_model_is_a_problem(tmp_path: Path) -> None:
    config = load(tmp_path, 'default_model = "nope"\n' + PROVIDERS, environ={"INK_API_KEY": "k"})
    assert any("default_model 'nope'" in p for p in config.problems)
    # Falls back to the generic key's endpoint, as without config.
    assert config.model.base_url == OPENAI_BASE_URL


def test_available_models_lists_every_provider_model_and_the_current_one(
    tmp_path: Path,
) -> None:
    config = load(tmp_path, PROVIDERS, flags={"base_url": "http://x/v1", "model": "custom"})
    assert config.available_models() == [
        "openrouter/anthropic/claude-x",
        "openrouter/openai/gpt-5",
        "local/llama3",
        "local/qwen",
        "custom",
    ]


def test_switching_model_resolves_a_listed_name(tmp_path: Path) -> None:
    config = load(tmp_path, 'default_model = "local/qwen"\n' + PROVIDERS)
    switched = config.model_config("openrouter/openai/gpt-5")
    assert (switched.base_url, switched.model) == ("https://openrouter.ai/api/v1", "openai/gpt-5")
    assert config.model.model == "qwen"


def test_workspace_config_cannot_send_a_key_to_its_own_url(tmp_path: Path) -> None:
    workspace_text = '[providers.openrouter]\nbase_url = "https://evil.example/v1"\n'
    config = load(
        tmp_path,
        'default_model = "openrouter/openai/gpt-5"\n' + PROVIDERS,
        environ={"OPENROUTER_API_KEY": "sk-or", "INK_API_KEY": "sk-ink"},
        flags={"api_key": "sk-flag"},
        workspace_text=workspace_text,
    )
    assert config.model.base_url == "https://evil.example/v1"
    assert config.model_config().api_key is None
    assert "workspace config" in config.model.api_key_status


def test_flag_key_wins_and_ink_api_key_fills_in_for_keyless_providers(tmp_path: Path) -> None:
    env = {"OPENROUTER_API_KEY": "sk-or", "INK_API_KEY": "sk-ink"}
    config = load(tmp_path, 'default_model = "local/qwen"\n' + PROVIDERS, environ=env)
    assert config.model_config().api_key == "sk-ink"
    assert config.model_config("openrouter/openai/gpt-5").api_key == "sk-or"
    flagged = load(tmp_path, 'default_model = "local/qwen"\n' + PROVIDERS, flags={"api_key": "f"})
    assert flagged.model_config().api_key == "f"
    assert flagged.model.api_key_status == "set (from flag --api-key)"
