"""Tool summaries count what the model was shown, not the notes around it, and never name
a path the call did not give."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ink_tui.core.messages import ToolCall
from ink_tui.core.tool_api import ToolLimits, ToolResult
from ink_tui.core.tool_summary import call_label, summary_line
from ink_tui.tools import default_tools
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.tool_fixtures import make_ctx, write_tree

ONE_LONG_LINE = "head -c 60000 /dev/zero | tr '\\0' x"


def summaries(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("✓", "✗"))]


def test_print_mode_summaries_count_what_was_shown(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "big.txt").write_text("".join(f"{n}\n" for n in range(1, 3001)))
    calls = [
        ("read", {"path": "big.txt", "offset": 976, "limit": 1025}),
        ("read", {"path": "big.txt"}),
        ("bash", {"command": "echo hi"}),
        ("bash", {"command": ONE_LONG_LINE}),
        ("bash", {"command": "true"}),
        ("read", {}),
    ]
    server.push(tool_reply(calls), text_reply("Done."))
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="m",
    )
    done = subprocess.run(
        [sys.executable, "-m", "ink_tui", "-p", "look", "--no-session", "--approval", "auto"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = summaries(done.stderr)
    assert len(lines) == 6, done.stderr
    expected = [
        ("✓ read big.txt", ": 1025 of 3000 lines"),
        ("✓ read big.txt", ": 2000 of 3000 lines"),
        ("✓ bash echo hi", ": 1 line"),
        ("✓ bash head -c 60000", ": 1 line (cut)"),
        ("✓ bash true", ": no output"),
        ("✗ read (no path)", ": Invalid arguments for read"),
    ]
    for line, (start, tail) in zip(lines, expected, strict=True):
        assert line.startswith(start), line
        # A duration may sit between the label and the count: "(0.1s)".
        assert tail in line and line.index(tail) > len(start) - 1, line
        if not line.startswith("✗"):
            assert line.endswith(tail), line


@pytest.mark.parametrize(
    ("tool", "args", "files", "expected"),
    [
        ("ls", {}, {"a": "", "b": "", "c": ""}, "ls .: 2 of 3 entries"),
        ("ls", {"path": "d"}, {"d/.keep": ""}, "ls d: 1 entry"),
        ("find", {"pattern": "*.py"}, {"a.py": "", "b.py": "", "c.py": ""}, "2 of 3 files"),
        ("find", {"pattern": "*.rs"}, {"a.py": ""}, "find *.rs: no files"),
        ("grep", {"pattern": "x"}, {"a": "x\nx\nx\n"}, "grep x: 2 matches (more not shown)"),
        ("grep", {"pattern": "x"}, {"a": "x\n"}, "grep x: 1 match"),
        ("grep", {"pattern": "y"}, {"a": "x\n"}, "grep y: no matches"),
        ("read", {"path": "e"}, {"e": ""}, "read e: empty file"),
        ("bash", {"command": "echo hi"}, {}, "bash echo hi: 1 line"),
        ("bash", {"command": ONE_LONG_LINE}, {}, ": 1 line (cut)"),
        ("bash", {"command": "seq 3"}, {}, "bash seq 3: 3 lines"),
    ],
)
async def test_tools_count_what_they_showed_not_notes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    args: dict[str, object],
    files: dict[str, str],
    expected: str,
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    write_tree(tmp_path, files)
    by_name = {t.name: t for t in default_tools()}
    limits = ToolLimits(max_entries=2)
    result = await by_name[tool].execute(dict(args), make_ctx(tmp_path, limits))
    line = summary_line(ToolCall("1", tool, dict(args)), result, 0.0)
    assert line.endswith(expected), line


def test_labels_name_only_paths_that_were_given() -> None:
    assert call_label(ToolCall("1", "read", {})) == "read (no path)"
    assert call_label(ToolCall("1", "write", {})) == "write (no path)"
    assert call_label(ToolCall("1", "read", {"offset": 3})) == "read offset=3"
    assert call_label(ToolCall("1", "ls", {})) == "ls ."
    assert call_label(ToolCall("1", "read", {"path": "a.py"})) == "read a.py"


def test_a_result_without_counts_falls_back_to_its_lines() -> None:
    result = ToolResult("one\ntwo")
    assert summary_line(ToolCall("1", "other", {}), result, 0.0) == "✓ other: 2 lines"
    wrote = ToolResult("wrote 3 lines (6 bytes) to a.txt (created a new file)")
    assert summary_line(ToolCall("1", "write", {"path": "a.txt"}), wrote, 0.0) == (
        "✓ write a.txt: wrote 3 lines (6 bytes) to a.txt (created a new file)"
    )
