"""What `ink config` prints: every effective value and where it came from.

Keys never appear here: only `ModelChoice.api_key_status` ("set (from env …)") is shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from ink_tui.session.config import Config, ProviderConfig
from ink_tui.session.config_files import display_path
from ink_tui.session.config_schema import KEY_ACTIONS, SETTINGS
from ink_tui.session.context_files import ContextFile, align, find_context_files, format_size


def render_report(config: Config, context_files: Sequence[ContextFile] | None = None) -> str:
    if context_files is None:
        context_files = find_context_files(config.workspace, config.user_config_dir)
    sections = [
        _files(config),
        _model(config),
        _settings(config),
        _keys(config),
        _providers(config),
        _problems(config),
        _context(context_files),
    ]
    return "\n\n".join(sections) + "\n"


def _section(title: str, rows: Sequence[tuple[str, ...]], empty: str = "") -> str:
    body = align(rows) if rows else [f"  {empty}"]
    return "\n".join([title, *body])


def _files(config: Config) -> str:
    rows = []
    held = config.held_back
    for layer in config.files:
        if not layer.found:
            state = "not found"
        elif held is not None and layer.kind == "workspace" and held.path == layer.path:
            state = f"loaded, not trusted ({held.state}): held back {held.names}"
        elif layer.loaded:
            state = "loaded"
        else:
            state = "found, not loaded (see problems)"
        rows.append((f"{layer.kind} config", display_path(layer.path), state))
    return _section("Config files (later wins; then env, then flags)", rows)


def _model(config: Config) -> str:
    model = config.model
    rows = [
        ("provider", model.provider or "-", model.provider_source),
        ("base_url", model.base_url or "offline demo", model.base_url_source),
        ("model", model.model or "-", model.model_source or "-"),
        ("api key", model.api_key_status, ""),
    ]
    if config.model_errors:
        rows.append(("usable", "no: ink and ink -p refuse to start (see Problems)", ""))
    return _section("Model", rows)


def _settings(config: Config) -> str:
    rows = [
        (spec.name, _show(config.value(spec.name)), config.source(spec.name)) for spec in SETTINGS
    ]
    return _section("Settings", rows)


def _keys(config: Config) -> str:
    rows = [
        (action, str(config.keys[action].value), config.keys[action].source)
        for action in KEY_ACTIONS
    ]
    return _section("Keys", rows)


def _providers(config: Config) -> str:
    rows: list[tuple[str, ...]] = []
    for provider in config.providers.values():
        rows += _provider_rows(config, provider)
    return _section("Providers", rows, empty="none configured")


def _provider_rows(config: Config, provider: ProviderConfig) -> list[tuple[str, ...]]:
    return [
        (provider.name, provider.url or "(no base_url)", ", ".join(provider.sources)),
        ("", "models: " + (", ".join(provider.models) or "-"), ""),
        ("", f"api key: {config.provider_key_status(provider.name)}", ""),
    ]


def _problems(config: Config) -> str:
    return _section("Problems", [(problem,) for problem in config.problems], empty="none")


def _context(files: Sequence[ContextFile]) -> str:
    rows = [
        (display_path(f.path), format_size(f.size), f.note or ("" if not f.skipped else "skipped"))
        for f in files
    ]
    return _section("Context files (in the order the model reads them)", rows, empty="none")


def _show(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ", ".join(str(item) for item in value) or "-"
    return str(value)
