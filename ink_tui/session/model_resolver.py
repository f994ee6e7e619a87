"""Turning the user's model choice into a provider, URL, model name and key.

The choice comes from flags and the environment (`ModelInputs`), `default_model` and
`provider`, and the `[providers.*]` tables; every problem met on the way is noted (see
`model_errors`: any of them stops `ink` from starting).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ink_tui.session.api_keys import ApiKey, ApiKeyError, key_from_env, key_from_file
from ink_tui.session.config_layers import DEFAULT, ProviderConfig, Setting
from ink_tui.session.model_choice import ModelChoice
from ink_tui.session.model_config import (
    ANTHROPIC_BASE_URL,
    ANTHROPIC_DEFAULT_MODEL,
    OPENAI_BASE_URL,
)


@dataclass(frozen=True, slots=True)
class ModelInputs:
    """What the environment and flags say about the model; kept out of reprs (keys)."""

    url: Setting | None
    model: Setting | None
    generic_keys: tuple[ApiKey, ...]
    environ: Mapping[str, str] = field(repr=False)
    # ANTHROPIC_API_KEY: with nothing else configured, it picks Anthropic's API.
    anthropic_key: ApiKey | None = None


def model_inputs(env: Mapping[str, str], flags: Mapping[str, object]) -> ModelInputs:
    url = _first(
        (flags.get("base_url"), "flag --base-url"),
        (env.get("INK_BASE_URL"), "env INK_BASE_URL"),
        (env.get("OPENAI_BASE_URL"), "env OPENAI_BASE_URL"),
    )
    if url is not None:
        url = Setting(str(url.value).rstrip("/"), url.source)
    model = _first((flags.get("model"), "flag --model"), (env.get("INK_MODEL"), "env INK_MODEL"))
    keys: list[ApiKey] = []
    flag_key = flags.get("api_key")
    if isinstance(flag_key, str) and flag_key.strip():
        keys.append(ApiKey(flag_key.strip(), "flag --api-key"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY"):
        key = key_from_env(name, env)
        if key is not None:
            keys.append(key)
    return ModelInputs(url, model, tuple(keys), env, key_from_env("ANTHROPIC_API_KEY", env))


def _first(*candidates: tuple[object, str]) -> Setting | None:
    for value, source in candidates:
        if isinstance(value, str) and value.strip():
            return Setting(value.strip(), source)
    return None


@dataclass(slots=True)
class ModelResolver:
    """Turns the user's model choice into a provider, URL, model name and key."""

    providers: Mapping[str, ProviderConfig]
    settings: Mapping[str, Setting]
    inputs: ModelInputs
    problems: list[str]

    def split(self, spec: str) -> tuple[str | None, str]:
        # Model names may contain "/" themselves ("meta-llama/Llama-3"), so the prefix only
        # counts as a provider when one by that name is configured.
        prefix, slash, rest = spec.partition("/")
        if slash and rest and prefix in self.providers:
            return prefix, rest
        return None, spec

    def choose(self, spec: Setting | None, *, switching: bool = False) -> ModelChoice:
        url = self.inputs.url
        if url is not None and not str(url.value).startswith(("http://", "https://")):
            self.note(
                f"base URL {str(url.value)!r} ({url.source}) must start with http:// or https://"
            )
        if spec is not None:
            provider, model = self.split(str(spec.value))
            if self.inputs.url is not None and not switching:
                # --base-url with --model: that model at that URL, as before config files.
                return self.from_url(str(spec.value), spec.source)
            if provider is None and self.inputs.url is None:
                fallback = self.default_provider()
                provider = self.owner_of(model, prefer=fallback) or fallback
            if provider is not None:
                return self.from_provider(provider, model, spec.source)
            if self.inputs.url is not None:
                return self.from_url(model, spec.source)
            return self.fallback(model, spec.source)
        if self.inputs.url is not None:
            return self.from_url(None, "")
        default = self.default_model()
        if default is not None:
            return self.from_provider(*default)
        if not self.inputs.generic_keys:
            usable = [p for p in self.providers.values() if p.url]
            if usable:
                return self.from_provider(usable[0].name, None, "first configured provider")
        return self.fallback(None, "")

    def owner_of(self, model: str, prefer: str | None = None) -> str | None:
        """The configured provider listing `model`: `prefer` if it does, else the first."""
        owners = [p.name for p in self.providers.values() if model in p.models]
        if prefer in owners:
            return prefer
        return owners[0] if owners else None

    def default_provider(self) -> str | None:
        default = self.default_model()
        if default is not None:
            return default[0]
        provider = self.settings["provider"].value
        if isinstance(provider, str) and provider in self.providers:
            return provider
        return None

    def default_model(self) -> tuple[str, str | None, str] | None:
        """(provider, model, source) from `default_model` and `provider`, if they name one."""
        settings = self.settings
        default, provider = settings["default_model"], settings["provider"]
        known = self.providers
        if isinstance(provider.value, str) and provider.value not in known:
            self.note(f"provider '{provider.value}' ({provider.source}) is not configured")
            provider = Setting(None, DEFAULT)
        if isinstance(default.value, str):
            named, model = self.split(default.value)
            if named is not None:
                return named, model, f"default_model ({default.source})"
            if isinstance(provider.value, str):
                return provider.value, model, f"default_model ({default.source})"
            owner = self.owner_of(model)
            if owner is not None:
                return owner, model, f"default_model ({default.source})"
            self.note(
                f"default_model '{model}' ({default.source}) names no configured provider; "
                "write '<provider>/<model>' or set provider"
            )
        elif isinstance(provider.value, str):
            return provider.value, None, f"provider ({provider.source})"
        return None

    def from_provider(self, name: str, model: str | None, model_source: str) -> ModelChoice:
        provider = self.providers[name]
        if provider.url is None or provider.base_url is None:
            self.note(f"provider '{name}' has no base_url; set [providers.{name}] base_url")
            return self.fallback(model, model_source)
        provider_source = model_source
        if model is None and provider.models:
            model, model_source = provider.models[0], f"first model of provider '{name}'"
        url_source = f"{provider.base_url.source} [providers.{name}]"
        key, note = self.key_for(provider, url_source)
        return ModelChoice(
            name,
            provider.url,
            model,
            model_source,
            url_source,
            key,
            note,
            provider_source,
            kind=provider.kind,
            thinking_budget=provider.thinking_budget,
        )

    def from_url(self, model: str | None, model_source: str) -> ModelChoice:
        url = self.inputs.url
        assert url is not None
        # A configured provider at the same URL lends its key and models.
        matches = [p for p in self.providers.values() if p.url == url.value]
        provider = matches[0] if matches else None
        if model is None and provider is not None and provider.models:
            model, model_source = provider.models[0], f"first model of provider '{provider.name}'"
        key, note = self.key_for(provider, url.source)
        if provider is None:
            return ModelChoice(None, str(url.value), model, model_source, url.source, key, note)
        matched = f"same base_url as [providers.{provider.name}]"
        return ModelChoice(
            provider.name,
            str(url.value),
            model,
            model_source,
            url.source,
            key,
            note,
            matched,
            kind=provider.kind,
            thinking_budget=provider.thinking_budget,
        )

    def fallback(self, model: str | None, model_source: str) -> ModelChoice:
        """Today's behaviour without a URL: a key alone means OpenAI, nothing means the demo."""
        if self.inputs.generic_keys:
            key = self.inputs.generic_keys[0]
            source = f"default (an API key is set in {key.source})"
            return ModelChoice(None, OPENAI_BASE_URL, model, model_source, source, key)
        anthropic = self.inputs.anthropic_key
        if anthropic is not None:
            source = f"default (an API key is set in {anthropic.source})"
            if model is None:
                model, model_source = ANTHROPIC_DEFAULT_MODEL, source
            return ModelChoice(
                None, ANTHROPIC_BASE_URL, model, model_source, source, anthropic, kind="anthropic"
            )
        return ModelChoice(None, None, model, model_source, "none: no base URL or API key set")

    def key_for(
        self, provider: ProviderConfig | None, url_source: str
    ) -> tuple[ApiKey | None, str | None]:
        if url_source.startswith("workspace config"):
            # A cloned repository's .ink/config.toml must not be able to send your key to a
            # server of its choosing.
            return None, "not sent: this base_url comes from a workspace config"
        generic = list(self.inputs.generic_keys)
        if provider is None:
            return (generic[0], None) if generic else (None, None)
        flag = [key for key in generic if key.source.startswith("flag")]
        if flag:
            return flag[0], None
        if provider.has_own_key:
            return self.provider_key(provider)
        # A provider without its own key setting takes the generic INK_API_KEY; the OpenAI
        # key only goes to OpenAI, the Anthropic key only to Anthropic.
        for key in generic:
            if key.source == "env INK_API_KEY" or provider.url == OPENAI_BASE_URL:
                return key, None
        if self.inputs.anthropic_key is not None and provider.url == ANTHROPIC_BASE_URL:
            return self.inputs.anthropic_key, None
        return None, None

    def provider_key(self, provider: ProviderConfig) -> tuple[ApiKey | None, str | None]:
        notes: list[str] = []
        if provider.api_key_env is not None:
            name = str(provider.api_key_env.value)
            key = key_from_env(name, self.inputs.environ)
            if key is not None:
                return key, None
            notes.append(f"not set (env {name} is empty)")
        if provider.api_key_file is not None:
            try:
                return key_from_file(Path(str(provider.api_key_file.value))), None
            except ApiKeyError as error:
                self.note(str(error))
                notes.append(f"not set ({error})")
        elif provider.api_key_env is not None:
            # The user said where the key is and it is not there: without it the server
            # would only refuse the request, after the prompt was sent.
            self.note(
                f"the API key of provider '{provider.name}' is not set: env "
                f"{provider.api_key_env.value} is empty (api_key_env in "
                f"{provider.api_key_env.source})"
            )
        return None, "; ".join(notes)

    def note(self, message: str) -> None:
        if message not in self.problems:
            self.problems.append(message)
