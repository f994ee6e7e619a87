"""Layering: defaults < user file < workspace file < environment < flags, each with its source."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.session.config import Config, load_config
from ink_tui.session.config_files import user_config_path

USER = 'steering_mode = "one-at-a-time"\nfollow_up_mode = "all"\nmax_iterations = 5\n'
USER += 'abort_grace_s = 2.5\ntheme = "nord"\n'
WORKSPACE = 'follow_up_mode = "one-at-a-time"\nmax_iterations = 6\n[tools]\nmax_lines = 40\n'


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / ".ink").mkdir(parents=True)
    user = tmp_path / "user.toml"
    user.write_text(USER)
    (workspace / ".ink" / "config.toml").write_text(WORKSPACE)
    return workspace, user, workspace / ".ink" / "config.toml"


def load(
    files: tuple[Path, Path, Path],
    environ: dict[str, str] | None = None,
    flags: dict[str, object] | None = None,
) -> Config:
    workspace, user, _ = files
    # The workspace file as a trusted one applies (tests/test_project_trust.py: untrusted).
    return load_config(
        workspace,
        flags=flags or {},
        environ=environ or {},
        user_config_path=user,
        trust_project=True,
    )


def test_defaults_apply_where_nothing_is_set(files: tuple[Path, Path, Path]) -> None:
    config = load(files)
    assert config.value("interrupt_queue") == "restore"
    assert config.source("interrupt_queue") == "default"
    assert config.value("tools.max_bytes") == 50 * 1024
    assert config.keys["interrupt"].source == "default"


def test_user_file_overrides_defaults(files: tuple[Path, Path, Path]) -> None:
    config = load(files)
    _, user, _ = files
    assert (config.steering_mode, config.source("steering_mode")) == (
        "one-at-a-time",
        f"user config {user}",
    )
    assert config.value("abort_grace_s") == 2.5
    assert config.theme == "nord"


def test_workspace_file_overrides_user_file(files: tuple[Path, Path, Path]) -> None:
    config = load(files)
    _, _, ws_file = files
    assert config.follow_up_mode == "one-at-a-time"
    assert config.source("follow_up_mode") == f"workspace config {ws_file}"
    assert config.value("tools.max_lines") == 40


def test_environment_overrides_both_files(files: tuple[Path, Path, Path]) -> None:
    env = {"INK_MAX_ITERATIONS": "9", "INK_STEERING_MODE": "all", "INK_FOLLOW_UP_MODE": "all"}
    config = load(files, environ=env)
    assert (config.value("max_iterations"), config.source("max_iterations")) == (
        9,
        "env INK_MAX_ITERATIONS",
    )
    assert (config.steering_mode, config.source("steering_mode")) == (
        "all",
        "env INK_STEERING_MODE",
    )
    assert config.source("follow_up_mode") == "env INK_FOLLOW_UP_MODE"


def test_flags_override_the_environment(files: tuple[Path, Path, Path]) -> None:
    env = {"INK_MAX_ITERATIONS": "9", "INK_STEERING_MODE": "all"}
    flags = {"max_iterations": 12, "steering_mode": "one-at-a-time", "follow_up_mode": None}
    config = load(files, environ=env, flags=flags)
    assert (config.value("max_iterations"), config.source("max_iterations")) == (
        12,
        "flag --max-iterations",
    )
    assert config.source("steering_mode") == "flag --steering-mode"
    # A flag left at None was not given: the workspace file's value stays.
    assert config.source("follow_up_mode").startswith("workspace config ")


def test_bad_environment_and_flag_values_are_reported_and_skipped(
    files: tuple[Path, Path, Path],
) -> None:
    env = {"INK_MAX_ITERATIONS": "lots", "INK_STEERING_MODE": "some"}
    config = load(files, environ=env, flags={"max_iterations": 0})
    assert config.problems == [
        "env INK_STEERING_MODE: must be one of 'all', 'one-at-a-time', got string 'some'; ignored",
        "env INK_MAX_ITERATIONS: must be an integer >= 1, got 'lots'; ignored",
        "flag --max-iterations: must be an integer >= 1, got 0; ignored",
    ]
    assert config.value("max_iterations") == 6
    assert config.steering_mode == "one-at-a-time"


def test_run_settings_carry_the_effective_values(files: tuple[Path, Path, Path]) -> None:
    settings = load(files, flags={"max_iterations": 3}).run_settings()
    assert settings.steering_mode == "one-at-a-time"
    assert settings.follow_up_mode == "one-at-a-time"
    assert settings.interrupt_queue == "restore"
    assert settings.loop.max_iterations == 3
    assert settings.loop.abort_grace_s == 2.5
    assert settings.limits.max_lines == 40


def test_user_file_is_found_under_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "ink" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('theme = "gruvbox"\n')
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert user_config_path() == path
    config = load_config(workspace, environ={})
    assert config.theme == "gruvbox"
    assert config.source("theme") == f"user config {path}"
    assert config.user_config_dir == path.parent
