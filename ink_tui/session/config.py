"""The effective configuration: defaults < user file < workspace file < environment < flags.

Every value keeps the layer it came from, so `ink config` can say why a setting is what it
is. Loading never raises for mistakes in files, variables or flags: the bad value is
skipped, lower layers apply, and a message goes to `Config.problems`.

The pieces: `config_files` reads a file, `config_layers` merges the layers,
`model_resolver` picks the model (a `model_choice.ModelChoice`), `model_errors` says why
a configured model cannot be used. This module holds `Config`, its accessors and
`load_config`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from ink_tui.session import config_files
from ink_tui.session.config_files import FileLayer, read_config_file
from ink_tui.session.config_layers import (
    DEFAULT,
    ProviderConfig,
    Setting,
    merge_keys,
    merge_providers,
    merge_settings,
)
from ink_tui.session.model_choice import ModelChoice
from ink_tui.session.model_config import ModelConfig
from ink_tui.session.model_errors import find_model_errors
from ink_tui.session.model_resolver import ModelInputs, ModelResolver, model_inputs
from ink_tui.session.project_trust import HeldBack, hold_back, trust_state

if TYPE_CHECKING:
    # Built only when a run starts: importing them (and the tool and message types they
    # bring) before the first frame cost some 6 ms.
    from ink_tui.control.input_queue import TakeMode
    from ink_tui.control.run_settings import RunSettings
    from ink_tui.core.prices import Price
    from ink_tui.core.stream_timeouts import StreamTimeouts

# Callers import these from here too.
__all__ = [
    "DEFAULT",
    "Config",
    "InterruptQueue",
    "ModelChoice",
    "ProviderConfig",
    "Setting",
    "load_config",
]

InterruptQueue = Literal["restore", "keep", "send"]


@dataclass(slots=True)
class Config:
    workspace: Path
    user_config_dir: Path
    files: list[FileLayer]
    settings: dict[str, Setting]
    providers: dict[str, ProviderConfig]
    keys: dict[str, Setting]
    problems: list[str]
    _inputs: ModelInputs = field(repr=False)
    # What an untrusted project config set that was not applied (`project_trust`).
    held_back: HeldBack | None = None
    model: ModelChoice = field(init=False)
    # Why the model the user configured cannot be used (see `model_errors`); when not
    # empty, `ink` refuses to start rather than run the offline demo in its place.
    model_errors: list[str] = field(init=False)

    def __post_init__(self) -> None:
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
        return cast("TakeMode", self.value("steering_mode"))

    @property
    def follow_up_mode(self) -> TakeMode:
        return cast("TakeMode", self.value("follow_up_mode"))

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
        from ink_tui.control.run_settings import RunSettings
        from ink_tui.core.loop_config import LoopConfig
        from ink_tui.core.tool_api import ToolLimits

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
            subagents_max_parallel=cast(int, self.value("subagents.max_parallel")),
            subagents_max_depth=cast(int, self.value("subagents.max_depth")),
            checkpoints=self.value("checkpoints.enabled") == "on",
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
        key, note = self._resolver([]).key_for(provider, provider.base_url.source)
        return key.describe() if key is not None else note or "not set"

    def resolve_model(self, spec: str | None, problems: list[str] | None = None) -> ModelChoice:
        """`spec` chosen by the user (switcher), or None for flags/env/config's choice."""
        resolver = self._resolver([] if problems is None else problems)
        if spec is None:
            choice = resolver.choose(self._inputs.model)
        else:
            choice = resolver.choose(Setting(spec, "chosen with /model"), switching=True)
        return replace(
            choice,
            timeouts=self.stream_timeouts(),
            context_window=self.context_window_for(choice.provider, choice.model),
        )

    def _resolver(self, problems: list[str]) -> ModelResolver:
        return ModelResolver(self.providers, self.settings, self._inputs, problems)

    @property
    def prices(self) -> dict[str, Price]:
        """`[prices]`: model name -> price, the workspace file's over the user's."""
        merged: dict[str, Price] = {}
        for layer in self.files:
            merged.update(layer.prices)
        return merged

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
        from ink_tui.core.stream_timeouts import StreamTimeouts

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
    trust_project: bool | None = None,
    trust_file: Path | None = None,
) -> Config:
    """Read both files, the environment and the flags the user gave (None = not given).
    The workspace file applies in full only when trusted (`project_trust`): in the trust
    store `trust_file`, or for this run with `trust_project` (or the flag of that name)."""
    env = os.environ if environ is None else environ
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    user_path = user_config_path or config_files.user_config_path()
    files = [
        read_config_file(user_path, "user"),
        read_config_file(
            workspace_config_path or config_files.workspace_config_path(workspace), "workspace"
        ),
    ]
    trusted = bool(given.get("trust_project")) if trust_project is None else trust_project
    held = None if trusted else _hold_back(files, env, given, trust_file)
    problems = [problem for layer in files for problem in layer.problems]
    if held is not None:
        problems.append(held.message())
    return Config(
        workspace=workspace,
        user_config_dir=user_path.parent,
        files=files,
        settings=merge_settings(files, env, given, problems),
        providers=merge_providers(files),
        keys=merge_keys(files),
        problems=problems,
        _inputs=model_inputs(env, given),
        held_back=held,
    )


def _hold_back(
    files: list[FileLayer],
    env: Mapping[str, str],
    given: Mapping[str, object],
    trust_file: Path | None,
) -> HeldBack | None:
    """Take out of an untrusted workspace file what it may not set (`project_trust`)."""
    user, layer = files
    if not layer.loaded or not layer.found:
        return None
    state = trust_state(layer.path, trust_file)
    if state is None:
        return None
    inputs = model_inputs(env, given)

    def server(layers: list[FileLayer]) -> tuple[str | None, str | None, int]:
        notes: list[str] = []
        settings = merge_settings(layers, env, given, [])
        resolver = ModelResolver(merge_providers(layers), settings, inputs, notes)
        choice = resolver.choose(inputs.model)
        return choice.provider, choice.base_url, len(notes)

    def changes_server(candidate: FileLayer) -> bool:
        return server([user, candidate]) != server([user])

    return hold_back(layer, user, state, changes_server)
