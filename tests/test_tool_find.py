from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolLimits
from ink_tui.tools.find import FindTool
from tests.tool_fixtures import make_ctx, write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            ".gitignore": "build/\n*.gen.py\n",
            "a.py": "",
            "B.py": "",
            "x.gen.py": "",
            "src/c.py": "",
            "src/app.ts": "",
            "src/lib/util.ts": "",
            "src/.gitignore": "lib/secret.ts\n",
            "src/lib/secret.ts": "",
            "build/out.py": "",
            ".hidden/h.py": "",
            ".git/hooks/x.py": "",
        },
    )
    return tmp_path


async def find(root: Path, pattern: str, limits: ToolLimits | None = None) -> list[str]:
    result = await FindTool().execute({"pattern": pattern}, make_ctx(root, limits))
    return result.content.splitlines()


async def test_double_star_finds_at_any_depth_respecting_gitignore(tree: Path) -> None:
    assert await find(tree, "**/*.py") == [".hidden/h.py", "B.py", "a.py", "src/c.py"]


async def test_pattern_without_slash_matches_names_anywhere(tree: Path) -> None:
    assert await find(tree, "*.ts") == ["src/app.ts", "src/lib/util.ts"]


async def test_pattern_with_slash_is_anchored(tree: Path) -> None:
    assert await find(tree, "src/*.ts") == ["src/app.ts"]
    assert await find(tree, "src/**/*.ts") == ["src/app.ts", "src/lib/util.ts"]


async def test_absolute_and_dot_slash_patterns_are_workspace_relative(tree: Path) -> None:
    assert await find(tree, str(tree / "src" / "*.py")) == ["src/c.py"]
    assert await find(tree, "./src/*.py") == ["src/c.py"]


async def test_no_match(tree: Path) -> None:
    result = await FindTool().execute({"pattern": "*.rs"}, make_ctx(tree))
    assert result.content == "no files match '*.rs'"
    assert not result.is_error


async def test_cap_with_note(tree: Path) -> None:
    result = await FindTool().execute(
        {"pattern": "**/*.py"}, make_ctx(tree, ToolLimits(max_entries=2))
    )
    assert result.content == (
        ".hidden/h.py\nB.py\n\n[showing 2 of 4 files; use a narrower pattern to see the rest]"
    )
    assert result.details == {"files": 4, "truncated": True, "shown": 2, "total": 4}
