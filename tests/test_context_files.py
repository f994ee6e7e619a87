"""AGENTS.md / CLAUDE.md discovery, and how they reach the system prompt and /context."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from ink_tui.session.context_files import (
    ContextFile,
    find_context_files,
    render_context_report,
)
from ink_tui.session.system_prompt import build_system_prompt
from ink_tui.tools import default_tools


def tree(tmp_path: Path) -> tuple[Path, Path]:
    """user dir + root/a/b/ws, with an instruction file at several levels."""
    user_dir = tmp_path / "user"
    workspace = tmp_path / "root" / "a" / "b" / "ws"
    workspace.mkdir(parents=True)
    user_dir.mkdir()
    (user_dir / "AGENTS.md").write_text("USER RULES")
    (tmp_path / "root" / "AGENTS.md").write_text("ROOT RULES")
    # Only a CLAUDE.md in a/: it is used in place of the missing AGENTS.md.
    (tmp_path / "root" / "a" / "CLAUDE.md").write_text("A CLAUDE RULES")
    # Both in ws/: AGENTS.md wins, CLAUDE.md is not read.
    (workspace / "AGENTS.md").write_text("WS RULES")
    (workspace / "CLAUDE.md").write_text("WS CLAUDE RULES")
    return user_dir, workspace


def ours(files: list[ContextFile], tmp_path: Path) -> list[ContextFile]:
    """Leave out instruction files the machine may have above the temporary folder."""
    return [f for f in files if f.path.is_relative_to(tmp_path)]


def test_user_dir_first_then_root_down_to_the_workspace(tmp_path: Path) -> None:
    user_dir, workspace = tree(tmp_path)
    files = ours(find_context_files(workspace, user_dir), tmp_path)
    assert [f.path for f in files] == [
        user_dir / "AGENTS.md",
        tmp_path / "root" / "AGENTS.md",
        tmp_path / "root" / "a" / "CLAUDE.md",
        workspace / "AGENTS.md",
    ]
    assert [f.text for f in files] == ["USER RULES", "ROOT RULES", "A CLAUDE RULES", "WS RULES"]


def test_claude_md_is_used_only_where_there_is_no_agents_md(tmp_path: Path) -> None:
    user_dir, workspace = tree(tmp_path)
    (tmp_path / "root" / "a" / "AGENTS.md").write_text("A AGENTS RULES")
    texts = [f.text for f in find_context_files(workspace, user_dir)]
    assert "A AGENTS RULES" in texts
    assert "A CLAUDE RULES" not in texts
    assert "WS CLAUDE RULES" not in texts


def test_user_dir_defaults_to_the_ink_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "ink").mkdir(parents=True)
    (tmp_path / "xdg" / "ink" / "CLAUDE.md").write_text("FROM XDG")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    files = find_context_files(workspace)
    assert files[0].path == tmp_path / "xdg" / "ink" / "CLAUDE.md"


def test_binary_files_are_skipped_with_a_note(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_bytes(b"\x89PNG\x00\x01\x02")
    [file] = ours(find_context_files(workspace, tmp_path / "none"), tmp_path)
    assert file.skipped and file.text == ""
    assert file.note == "skipped: not UTF-8 text"
    assert "skipped: not UTF-8 text" in render_context_report([file])


def test_large_files_are_capped_with_a_note(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # A multi-byte character straddles the cut: still text, not binary.
    (workspace / "AGENTS.md").write_text("é" * 1000, encoding="utf-8")
    [file] = ours(find_context_files(workspace, tmp_path / "none", max_bytes=1001), tmp_path)
    assert not file.skipped
    assert file.text == "é" * 500
    assert file.size == 2000
    assert file.note == "truncated to 1001 B of 2 KB"


def test_system_prompt_names_workspace_date_tools_and_files_in_order(tmp_path: Path) -> None:
    user_dir, workspace = tree(tmp_path)
    files = ours(find_context_files(workspace, user_dir), tmp_path)
    prompt = build_system_prompt(workspace, default_tools(), files, dt.date(2030, 1, 2))
    assert f"Workspace: {workspace}" in prompt
    assert "Today's date: 2030-01-02" in prompt
    assert "- read: " in prompt
    positions = [prompt.index(f"# Context file: {f.path}\n\n{f.text}") for f in files]
    assert positions == sorted(positions)
    assert prompt.index("Tools:") < positions[0]


def test_system_prompt_leaves_out_skipped_files_and_notes_truncation(tmp_path: Path) -> None:
    files = [
        ContextFile(tmp_path / "bin" / "AGENTS.md", "", 10, "skipped: not UTF-8 text", True),
        ContextFile(tmp_path / "AGENTS.md", "KEEP", 9000, "truncated to 4 B of 8.8 KB"),
    ]
    prompt = build_system_prompt(tmp_path, [], files)
    assert str(tmp_path / "bin" / "AGENTS.md") not in prompt
    assert f"# Context file: {tmp_path / 'AGENTS.md'}\n\nKEEP\n[truncated to 4 B of 8.8 KB]" in (
        prompt
    )


def test_system_prompt_without_context_files_is_unchanged(tmp_path: Path) -> None:
    tools = default_tools()
    day = dt.date(2030, 1, 2)
    assert build_system_prompt(tmp_path, tools, today=day) == build_system_prompt(
        tmp_path, tools, [], day
    )
    assert "Context file" not in build_system_prompt(tmp_path, tools, today=day)


def test_context_report_lists_files_in_order_with_sizes(tmp_path: Path) -> None:
    user_dir, workspace = tree(tmp_path)
    report = render_context_report(ours(find_context_files(workspace, user_dir), tmp_path))
    lines = report.splitlines()
    assert lines[0] == "Context files (4 loaded, in the order the model reads them):"
    assert lines[1].split() == ["1.", str(user_dir / "AGENTS.md"), "10", "B"]
    assert lines[4].split() == ["4.", str(workspace / "AGENTS.md"), "8", "B"]


def test_context_report_with_no_files_says_where_it_looked(tmp_path: Path) -> None:
    report = render_context_report([], tmp_path)
    assert "No context files loaded" in report and str(tmp_path) in report
