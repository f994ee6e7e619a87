"""The `ink` command line: `ink config`, session flags, config errors in print mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_ink(*args: str, cwd: Path, home: Path, **extra: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"), **extra)
    return subprocess.run(
        [sys.executable, "-m", "ink_tui", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_ink_config_prints_settings_with_their_sources(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text('follow_up_mode = "all"\nmax_iterations = 0\n')
    done = run_ink("config", cwd=workspace, home=tmp_path, INK_API_KEY="sk-very-secret-key")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    follow = next(line for line in lines if "follow_up_mode" in line)
    assert "all" in follow and "workspace config" in follow
    assert "max_iterations" in done.stdout and "line 2" in done.stdout
    assert "sk-very-secret-key" not in done.stdout


def test_resume_with_an_unknown_id_is_a_clear_error(workspace: Path, tmp_path: Path) -> None:
    done = run_ink("-r", "abcdef", cwd=workspace, home=tmp_path)
    assert done.returncode == 2
    assert "abcdef" in done.stderr


def test_print_mode_reports_config_problems_and_still_runs(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text("this is = = not toml\n")
    done = run_ink("-p", "hello", cwd=workspace, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "config.toml" in done.stderr and "line 1" in done.stderr
    assert "demo model" in done.stdout


def test_print_mode_records_a_session_unless_told_not_to(workspace: Path, tmp_path: Path) -> None:
    from ink_tui.session.catalog import list_sessions

    root = tmp_path / "data" / "ink"
    done = run_ink("-p", "hello", cwd=workspace, home=tmp_path)
    assert done.returncode == 0, done.stderr
    [session] = list_sessions(workspace, root)
    assert session.first_prompt == "hello"
    done = run_ink("-p", "hello again", "--no-session", cwd=workspace, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(list_sessions(workspace, root)) == 1
