"""API keys: from the environment or a 0600 file, and never in anything printed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ink_tui.session.api_keys import ApiKeyError, key_from_env, key_from_file
from ink_tui.session.config import load_config
from ink_tui.session.config_report import render_report

FAKE_KEY = "sk-FAKE-zq9x7-do-not-print-me"

needs_posix_modes = pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")


def key_file(tmp_path: Path, mode: int) -> Path:
    path = tmp_path / "secret.key"
    path.write_text(FAKE_KEY + "\n")
    path.chmod(mode)
    return path


@needs_posix_modes
def test_key_file_with_0600_is_read(tmp_path: Path) -> None:
    key = key_from_file(key_file(tmp_path, 0o600))
    assert key.value == FAKE_KEY
    assert key.source == f"file {tmp_path / 'secret.key'}"


@needs_posix_modes
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_key_file_readable_by_others_is_refused_with_the_fix(tmp_path: Path, mode: int) -> None:
    path = key_file(tmp_path, mode)
    with pytest.raises(ApiKeyError) as caught:
        key_from_file(path)
    message = str(caught.value)
    assert str(path) in message
    assert f"chmod 600 {path}" in message
    assert FAKE_KEY not in message


def test_missing_and_empty_key_files_are_explained(tmp_path: Path) -> None:
    with pytest.raises(ApiKeyError, match="does not exist"):
        key_from_file(tmp_path / "nope.key")
    empty = tmp_path / "empty.key"
    empty.write_text("\n")
    empty.chmod(0o600)
    with pytest.raises(ApiKeyError, match="is empty"):
        key_from_file(empty)


def test_key_from_env_ignores_blank_values() -> None:
    assert key_from_env("K", {"K": "  "}) is None
    key = key_from_env("K", {"K": FAKE_KEY})
    assert key is not None and key.value == FAKE_KEY and key.source == "env K"
    assert FAKE_KEY not in repr(key)


def provider_config(tmp_path: Path, key_line: str) -> Path:
    user = tmp_path / "config.toml"
    user.write_text(
        'default_model = "p/m1"\n'
        f'[providers.p]\nbase_url = "https://p.example/v1"\n{key_line}\nmodels = ["m1"]\n'
    )
    return user


@needs_posix_modes
def test_provider_key_file_with_open_permissions_is_a_problem_and_not_used(
    tmp_path: Path,
) -> None:
    key_file(tmp_path, 0o644)
    user = provider_config(tmp_path, 'api_key_file = "secret.key"')
    config = load_config(tmp_path, environ={"INK_API_KEY": "x"}, user_config_path=user)
    assert config.model_config().api_key is None
    assert any("chmod 600" in problem for problem in config.problems)


@needs_posix_modes
def test_provider_key_file_with_0600_is_used(tmp_path: Path) -> None:
    key_file(tmp_path, 0o600)
    user = provider_config(tmp_path, 'api_key_file = "secret.key"')
    config = load_config(tmp_path, environ={}, user_config_path=user)
    assert config.model_config().api_key == FAKE_KEY
    assert config.model.api_key_status == f"set (from file {tmp_path / 'secret.key'})"


@pytest.mark.parametrize(
    ("key_line", "environ", "flags", "status"),
    [
        ('api_key_env = "P_KEY"', {"P_KEY": FAKE_KEY}, {}, "set (from env P_KEY)"),
        ("", {"INK_API_KEY": FAKE_KEY}, {}, "set (from env INK_API_KEY)"),
        ("", {}, {"api_key": FAKE_KEY}, "set (from flag --api-key)"),
        ('api_key_file = "secret.key"', {}, {}, "set (from file "),
    ],
)
def test_report_says_where_the_key_is_from_but_never_shows_it(
    tmp_path: Path,
    key_line: str,
    environ: dict[str, str],
    flags: dict[str, object],
    status: str,
) -> None:
    key_file(tmp_path, 0o600)
    user = provider_config(tmp_path, key_line)
    config = load_config(tmp_path, flags=flags, environ=environ, user_config_path=user)
    assert config.model_config().api_key == FAKE_KEY
    report = render_report(config, context_files=[])
    assert status in report
    assert FAKE_KEY not in report
    assert FAKE_KEY not in repr(config)
    assert FAKE_KEY not in "\n".join(config.problems)
