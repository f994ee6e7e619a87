"""The effective configuration: defaults < user file < workspace file < environment < flags.

Every value keeps the layer it came from, so `ink config` can say why a setting is what it
is. Loading never raises for mistakes in files, variables or flags: the bad value is
skipped, lower layers apply, and a message goes to `Config.problems`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from ink_tui.control.input_queue import TakeMode
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.loop_config import LoopConfig
from ink_tui.core.tool_api import ToolLimits
from ink_tui.session import config_files
from ink_tui.session.api_keys import ApiKey, ApiKeyError, key_from_env, key_from_file
from ink_tui.session.config_files import FileLayer, read_config_file
from ink_tui.session.config_schema import (
    KEY_ACTIONS,
    SETTINGS,
    check_value,
    flag_label,
    parse_text,
)
from ink_tui.session.model_config import (
    ANTHROPIC_BASE_URL,
    ANTHROPIC_DEFAULT_MODEL,
    OPENAI_BASE_URL,
    ModelConfig,
)

if TYPE_CHECKING:
    from ink_tui.core.provider_api import StreamTimeouts

DEFAULT = "default"
InterruptQueue = Literal["restore", "keep", "send"]


@dataclass(frozen=True, slots=True)
class Setting:
    value: object
    # "default", "user config <path>", "workspace config <path>", "env INK_…", "flag --…".
    source: str


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    name: str
    # Each field as set by the highest layer that set it; None where no layer did.
    base_url: Setting | None = None
    api_key_env: Setting | None = None
    api_key_file: Setting | None = None
    models: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    kind: str = "openai"
    thinking_budget: int | None = None

    @property
    def url(self) -> str | None:
        return None if self.base_url is None else str(self.base_url.value).rstrip("/")

    @property
    def has_own_key(self) -> bool:
        return self.api_key_env is not None or self.api_key_file is not None


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


@dataclass(frozen=True, slots=True)
class _ModelInputs:
    """What the environment and flags say about the model; kept out of reprs (keys)."""

    url: Setting | None
    model: Setting | None
    generic_keys: tuple[ApiKey, ...]
    environ: Mapping[str, str] = field(repr=False)
    # ANTHROPIC_API_KEY: with nothing else configured, it picks Anthropic's API.
    anthropic_key: ApiKey | None = None


@dataclass(slots=True)
class Config:
    workspace: Path
    user_config_dir: Path
    files: list[FileLayer]
    settings: dict[str, Setting]
    providers: dict[str, ProviderConfig]
    keys: dict[str, Setting]
    problems: list[str]
    _inputs: _ModelInputs = field(repr=False)
    model: ModelChoice = field(init=False)
    # Why the model the user configured cannot be used (see `model_errors`); when not
    # empty, `ink` refuses to start rather than run the offline demo in its place.
    model_errors: list[str] = field(init=False)

    def __post_init__(self) -> None:
        from ink_tui.session.model_errors import find_model_errors

        notes: list[str] = []
        self.model = self.resolve_model(None, notes)
        self.problems.extend(note for note in notes if note not in self.problems)
        self.model_errors = find_model_errors(self, notes)

    def model_sources(self) -> list[str]:
        """Where the user configured anything about the model ("flag --model", "default_model
        in user config ~/.config/ink/config.toml"); [] means the demo is what they get."""
        inputs = self._inputs
        sources = [s.source for s in (inputs.url, inputs.model) if s is not None]
        sources += [key.source for key in inputs.generic_keys]
        for name in ("default_model", "provider"):
            setting = self.settings[name]
            if setting.source != DEFAULT:
                sources.append(f"{name} in {setting.source}")
        for layer in self.files:
            for key in layer.model_keys:
                label = f"{key} in {layer.label}"
                if label not in sources:
                    sources.append(label)
        return sources

    def value(self, name: str) -> object:
        return self.settings[name].value

    def source(self, name: str) -> str:
        return self.settings[name].source

    @property
    def steering_mode(self) -> TakeMode:
        return cast(TakeMode, self.value("steering_mode"))

    @property
    def follow_up_mode(self) -> TakeMode:
        return cast(TakeMode, self.value("follow_up_mode"))

    @property
    def interrupt_queue(self) -> InterruptQueue:
        return cast(InterruptQueue, self.value("interrupt_queue"))

    @property
    def theme(self) -> str:
        return str(self.value("theme"))

    @property
    def key_bindings(self) -> dict[str, str]:
        return {action: str(setting.value) for action, setting in self.keys.items()}

    def run_settings(self) -> RunSettings:
        return RunSettings(
            steering_mode=self.steering_mode,
            follow_up_mode=self.follow_up_mode,
            interrupt_queue=self.interrupt_queue,
            loop=LoopConfig(
                max_iterations=cast(int, self.value("max_iterations")),
                abort_grace_s=cast(float, self.value("abort_grace_s")),
                compact_at=cast(float, self.value("compact_at")),
            ),
            limits=ToolLimits(
                max_lines=cast(int, self.value("tools.max_lines")),
                max_bytes=cast(int, self.value("tools.max_bytes")),
                max_entries=cast(int, self.value("tools.max_entries")),
            ),
            hide_env=self.key_variables(),
            pass_env=cast(tuple[str, ...], self.value("tools.pass_env")),
            approval=str(self.value("approval.policy")),
            approval_allow=self.approval_rules(),
        )

    def approval_rules(self) -> tuple[str, ...]:
        """The `[approval] allow` rules of every file, added up (the user's, then the
        workspace's), without repeats: a rule saved in one file must not hide another's."""
        rules: dict[str, None] = {}
        for layer in self.files:
            for rule in cast(tuple[str, ...], layer.settings.get("approval.allow", ())):
                rules.setdefault(rule, None)
        return tuple(rules)

    def key_variables(self) -> tuple[str, ...]:
        """Every provider's `api_key_env`: bash commands run without these variables."""
        return tuple(
            str(provider.api_key_env.value)
            for provider in self.providers.values()
            if provider.api_key_env is not None
        )

    def model_config(self, spec: str | None = None) -> ModelConfig:
        """The model in use, or the one `spec` ("<provider>/<model>" or "<model>") names."""
        choice = self.model if spec is None else self.resolve_model(spec)
        return choice.model_config()

    def available_models(self) -> list[str]:
        """Every "<provider>/<model>" configured, for a /model switcher, plus the current one."""
        names = [f"{p.name}/{m}" for p in self.providers.values() if p.url for m in p.models]
        if not self.model.is_demo and self.model.label not in names:
            names.append(self.model.label)
        return names

    def provider_key_status(self, name: str) -> str:
        """ "set (from env …)", "not set" or why not, for the provider `name`; never the key."""
        provider = self.providers[name]
        if provider.base_url is None:
            return "-"
        key, note = _Resolver(self, []).key_for(provider, provider.base_url.source)
        return key.describe() if key is not None else note or "not set"

    def resolve_model(self, spec: str | None, problems: list[str] | None = None) -> ModelChoice:
        """`spec` chosen by the user (switcher), or None for flags/env/config's choice."""
        resolver = _Resolver(self, [] if problems is None else problems)
        if spec is None:
            choice = resolver.choose(self._inputs.model)
        else:
            choice = resolver.choose(Setting(spec, "chosen with /model"), switching=True)
        return replace(
            choice,
            timeouts=self.stream_timeouts(),
            context_window=self.context_window_for(choice.provider, choice.model),
        )

    def context_window_for(self, provider: str | None, model: str | None) -> int | None:
        """`[context_windows]` for "<provider>/<model>", else for the bare model name
        (the workspace file over the user's)."""
        if not model:
            return None
        names = ([f"{provider}/{model}"] if provider else []) + [model]
        for name in names:
            for layer in reversed(self.files):
                if name in layer.context_windows:
                    return layer.context_windows[name]
        return None

    def stream_timeouts(self) -> StreamTimeouts:
        # Imported here: configuration is read before the first frame, the provider API later.
        from ink_tui.core.provider_api import StreamTimeouts

        return StreamTimeouts(
            first_byte_s=cast(float, self.value("first_token_timeout_s")),
            idle_s=cast(float, self.value("stream_idle_timeout_s")),
            attempt_s=cast(float, self.value("request_timeout_s")),
        )


def load_config(
    workspace: Path,
    *,
    flags: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    user_config_path: Path | None = None,
    workspace_config_path: Path | None = None,
) -> Config:
    """Read both files, the environment and the flags the user gave (None = not given)."""
    env = os.environ if environ is None else environ
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    user_path = user_config_path or config_files.user_config_path()
    files = [
        read_config_file(user_path, "user"),
        read_config_file(
            workspace_config_path or config_files.workspace_config_path(workspace), "workspace"
        ),
    ]
    problems = [problem for layer in files for problem in layer.problems]
    return Config(
        workspace=workspace,
        user_config_dir=user_path.parent,
        files=files,
        settings=_merge_settings(files, env, given, problems),
        providers=_merge_providers(files),
        keys=_merge_keys(files),
        problems=problems,
        _inputs=_model_inputs(env, given),
    )


def _merge_settings(
    files: list[FileLayer],
    env: Mapping[str, str],
    flags: Mapping[str, object],
    problems: list[str],
) -> dict[str, Setting]:
    merged = {spec.name: Setting(spec.default, DEFAULT) for spec in SETTINGS}
    for layer in files:
        for name, value in layer.settings.items():
            merged[name] = Setting(value, layer.label)
    for spec in SETTINGS:
        text = env.get(spec.env, "").strip() if spec.env else ""
        if spec.env and text:
            try:
                merged[spec.name] = Setting(parse_text(spec, text), f"env {spec.env}")
            except ValueError as error:
                problems.append(f"env {spec.env}: {error}; ignored")
    for spec in SETTINGS:
        if spec.flag is None or spec.flag not in flags:
            continue
        raw = flags[spec.flag]
        label = flag_label(spec.flag)
        try:
            value = parse_text(spec, raw) if isinstance(raw, str) else check_value(spec, raw)
            merged[spec.name] = Setting(value, f"flag {label}")
        except ValueError as error:
            problems.append(f"flag {label}: {error}; ignored")
    return merged


def _merge_providers(files: list[FileLayer]) -> dict[str, ProviderConfig]:
    fields: dict[str, dict[str, Setting]] = {}
    sources: dict[str, list[str]] = {}
    for layer in files:
        for name, values in layer.providers.items():
            fields.setdefault(name, {}).update(
                {key: Setting(value, layer.label) for key, value in values.items()}
            )
            sources.setdefault(name, []).append(layer.label)
    return {
        name: ProviderConfig(
            name=name,
            base_url=values.get("base_url"),
            api_key_env=values.get("api_key_env"),
            api_key_file=values.get("api_key_file"),
            models=cast(tuple[str, ...], values["models"].value) if "models" in values else (),
            sources=tuple(sources[name]),
            kind=str(values["kind"].value) if "kind" in values else "openai",
            thinking_budget=(
                cast(int, values["thinking_budget"].value) if "thinking_budget" in values else None
            ),
        )
        for name, values in fields.items()
    }


def _merge_keys(files: list[FileLayer]) -> dict[str, Setting]:
    merged = {action: Setting(key, DEFAULT) for action, (key, _doc) in KEY_ACTIONS.items()}
    for layer in files:
        for action, key in layer.keys.items():
            merged[action] = Setting(key, layer.label)
    return merged


def _first(*candidates: tuple[object, str]) -> Setting | None:
    for value, source in candidates:
        if isinstance(value, str) and value.strip():
            return Setting(value.strip(), source)
    return None


def _model_inputs(env: Mapping[str, str], flags: Mapping[str, object]) -> _ModelInputs:
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
    return _ModelInputs(url, model, tuple(keys), env, key_from_env("ANTHROPIC_API_KEY", env))


@dataclass(slots=True)
class _Resolver:
    """Turns the user's model choice into a provider, URL, model name and key."""

    config: Config
    problems: list[str]

    @property
    def inputs(self) -> _ModelInputs:
        return self.config._inputs

    def split(self, spec: str) -> tuple[str | None, str]:
        # Model names may contain "/" themselves ("meta-llama/Llama-3"), so the prefix only
        # counts as a provider when one by that name is configured.
        prefix, slash, rest = spec.partition("/")
        if slash and rest and prefix in self.config.providers:
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
            usable = [p for p in self.config.providers.values() if p.url]
            if usable:
                return self.from_provider(usable[0].name, None, "first configured provider")
        return self.fallback(None, "")

    def owner_of(self, model: str, prefer: str | None = None) -> str | None:
        """The configured provider listing `model`: `prefer` if it does, else the first."""
        owners = [p.name for p in self.config.providers.values() if model in p.models]
        if prefer in owners:
            return prefer
        return owners[0] if owners else None

    def default_provider(self) -> str | None:
        default = self.default_model()
        if default is not None:
            return default[0]
        provider = self.config.settings["provider"].value
        if isinstance(provider, str) and provider in self.config.providers:
            return provider
        return None

    def default_model(self) -> tuple[str, str | None, str] | None:
        """(provider, model, source) from `default_model` and `provider`, if they name one."""
        settings = self.config.settings
        default, provider = settings["default_model"], settings["provider"]
        known = self.config.providers
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
        provider = self.config.providers[name]
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
        matches = [p for p in self.config.providers.values() if p.url == url.value]
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
