"""A model the user configured but ink cannot use: stop with exit 2 and say why and where.

Never the offline demo in its place (its answers would pass for the configured model's);
the demo is only for a machine where nothing about a model is configured. The real `ink`
in a subprocess, its config folder in a temporary home.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedServer, text_reply

URL = "{url}"  # replaced by the scripted server's address


def ink(
    *args: str, cwd: Path, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    clean.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        **(env or {}),
    )
    return subprocess.run(
        [sys.executable, "-m", "ink_tui", *args],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def user_config(home: Path, text: str) -> Path:
    path = home / "config" / "ink" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


CONFIG = "~/config/ink/config.toml"

CASES = {
    "unknown provider in default_model": (
        f'default_model = "nope/m"\n[providers.local]\nbase_url = "{URL}"\nmodels = ["m"]\n',
        {},
        [],
        ["default_model 'nope/m'", f"user config {CONFIG}", "names no configured provider"],
    ),
    "unknown provider setting": (
        f'provider = "nope"\n[providers.local]\nbase_url = "{URL}"\n',
        {},
        [],
        ["provider 'nope'", f"user config {CONFIG}", "is not configured"],
    ),
    "missing key file": (
        f'default_model = "p/m"\n[providers.p]\nbase_url = "{URL}"\napi_key_file = "gone.key"\n',
        {},
        [],
        ["API key file ~/config/ink/gone.key does not exist"],
    ),
    "empty key variable": (
        f'default_model = "p/m"\n[providers.p]\nbase_url = "{URL}"\napi_key_env = "P_KEY"\n',
        {},
        [],
        ["API key of provider 'p' is not set: env P_KEY is empty", f"user config {CONFIG}"],
    ),
    "provider base_url that is not a URL": (
        '[providers.local]\nbase_url = "localhost:11434/v1"\nmodels = ["m"]\n',
        {},
        [],
        [f"{CONFIG} line 2", "'providers.local.base_url' must start with http://"],
    ),
    "config file that is not TOML but sets providers": (
        f'[providers.local\nbase_url = "{URL}"\ndefault_model = "local/m"\n',
        {},
        [],
        [f"{CONFIG} line 1", "invalid TOML", "default_model in user config"],
    ),
    "base URL flag that is not a URL": (
        None,
        {},
        ["--base-url", "localhost:8080/v1", "--model", "m"],
        ["base URL 'localhost:8080/v1' (flag --base-url) must start with http://"],
    ),
    "a model name and nothing else": (
        None,
        {"INK_MODEL": "qwen3"},
        [],
        ["configured by: env INK_MODEL", "no [providers.*] table lists model 'qwen3'"],
    ),
}


@pytest.mark.parametrize(("text", "env", "flags", "expected"), CASES.values(), ids=CASES.keys())
def test_print_mode_refuses_an_unusable_configured_model(
    server: ScriptedServer,
    workspace: Path,
    tmp_path: Path,
    text: str | None,
    env: dict[str, str],
    flags: list[str],
    expected: list[str],
) -> None:
    if text is not None:
        user_config(tmp_path, text.replace(URL, server.base_url))
    done = ink(*flags, "-p", "hello", cwd=workspace, home=tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "using the offline demo model" not in done.stderr
    for words in expected:
        assert words in done.stderr
    assert "the model you configured cannot be used" in done.stderr
    # Nothing reached a server: the prompt was not sent anywhere.
    assert server.requests == []


def test_the_app_refuses_to_start_the_same_way(workspace: Path, tmp_path: Path) -> None:
    user_config(tmp_path, 'default_model = "nope/m"\n')
    done = ink(cwd=workspace, home=tmp_path)
    assert done.returncode == 2
    assert "default_model 'nope/m'" in done.stderr
    assert "the model you configured cannot be used" in done.stderr
    # Refused before the screen was taken over: no escape codes, only the message.
    assert "\x1b[" not in done.stdout + done.stderr


def test_nothing_configured_is_still_the_demo(workspace: Path, tmp_path: Path) -> None:
    user_config(tmp_path, 'theme = "nord"\n')
    done = ink("-p", "hello", cwd=workspace, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "offline demo model" in done.stderr


def test_a_broken_provider_that_is_not_chosen_is_only_a_warning(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    user_config(
        tmp_path,
        f'default_model = "good/m"\n[providers.good]\nbase_url = "{server.base_url}"\n'
        '[providers.spare]\nbase_url = "not-a-url"\n',
    )
    server.push(text_reply("from the good one"))
    done = ink("-p", "hello", cwd=workspace, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from the good one\n"
    assert "'providers.spare.base_url' must start with http://" in done.stderr
