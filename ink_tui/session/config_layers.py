"""Merging the layers: defaults < user file < workspace file < environment < flags.

Every merged value is a `Setting` that keeps the layer it came from, so `ink config` can
say why a setting is what it is. A bad value from the environment or a flag is skipped
(lower layers apply) and a message goes to `problems`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from ink_tui.session.config_files import FileLayer
from ink_tui.session.config_schema import (
    KEY_ACTIONS,
    SETTINGS,
    check_value,
    flag_label,
    parse_text,
)

DEFAULT = "default"


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


def merge_settings(
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


def merge_providers(files: list[FileLayer]) -> dict[str, ProviderConfig]:
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


def merge_keys(files: list[FileLayer]) -> dict[str, Setting]:
    merged = {action: Setting(key, DEFAULT) for action, (key, _doc) in KEY_ACTIONS.items()}
    for layer in files:
        for action, key in layer.keys.items():
            merged[action] = Setting(key, layer.label)
    return merged
