"""`ink config`: every setting with its value and source, files, providers, problems, context."""

from __future__ import annotations

from pathlib import Path

from ink_tui.session.config import load_config
from ink_tui.session.config_report import render_report
from ink_tui.session.config_schema import KEY_ACTIONS, SETTINGS
from ink_tui.session.context_files import ContextFile


def make_report(tmp_path: Path) -> tuple[str, Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text(
        'theme = "nord"\nsteer_mode = "all"\n'
        '[providers.local]\nbase_url = "http://localhost:1234/v1"\nmodels = ["a", "b"]\n'
    )
    config = load_config(workspace, flags={"max_iterations": 4}, environ={}, user_config_path=user)
    context = [ContextFile(workspace / "AGENTS.md", "be brief", 8)]
    return render_report(config, context), user, workspace


def section(report: str, title: str) -> str:
    [block] = [block for block in report.split("\n\n") if block.startswith(title)]
    return block


def line_with(text: str, start: str) -> str:
    [line] = [line for line in text.splitlines() if line.strip().startswith(start)]
    return line


def test_every_setting_and_key_binding_is_listed_with_its_source(tmp_path: Path) -> None:
    report, user, _ = make_report(tmp_path)
    settings, keys = section(report, "Settings"), section(report, "Keys")
    assert len(settings.splitlines()) == len(SETTINGS) + 1
    assert len(keys.splitlines()) == len(KEY_ACTIONS) + 1
    for action in KEY_ACTIONS:
        assert line_with(keys, action + " ").split()[-1] == "default"
    assert line_with(settings, "theme ").split() == ["theme", "nord", "user", "config", str(user)]
    assert line_with(settings, "max_iterations ").split() == [
        "max_iterations",
        "4",
        "flag",
        "--max-iterations",
    ]
    assert line_with(settings, "interrupt_queue ").split() == [
        "interrupt_queue",
        "restore",
        "default",
    ]


def test_value_and_source_columns_are_aligned(tmp_path: Path) -> None:
    report, _, _ = make_report(tmp_path)
    settings = section(report, "Settings")
    rows = [line_with(settings, spec.name + " ") for spec in SETTINGS]
    value_columns = {row.index(row.split()[1], len(row.split()[0]) + 2) for row in rows}
    assert len(value_columns) == 1


def test_files_providers_problems_and_context_are_shown(tmp_path: Path) -> None:
    report, user, workspace = make_report(tmp_path)
    assert line_with(report, "user config ").split()[-1] == "loaded"
    assert line_with(report, "workspace config ").endswith("not found")
    assert str(workspace / ".ink" / "config.toml") in report
    assert line_with(report, "local ").split()[1] == "http://localhost:1234/v1"
    assert "models: a, b" in report
    assert f"{user} line 2: unknown key 'steer_mode' (did you mean 'steering_mode'?)" in report
    assert line_with(report, str(workspace / "AGENTS.md")).split()[1:] == ["8", "B"]
    # The provider is the only one configured, so it is the model in use.
    assert line_with(section(report, "Model"), "model ").split()[1:] == [
        "a",
        "first",
        "model",
        "of",
        "provider",
        "'local'",
    ]
