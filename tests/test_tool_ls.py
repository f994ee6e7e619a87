from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolError, ToolLimits
from ink_tui.tools.ls import LsTool
from tests.tool_fixtures import make_ctx, write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"b.txt": "", "A.txt": "", ".env": "", "dir/inner.txt": ""})
    (tmp_path / ".cache").mkdir()
    return tmp_path


async def test_lists_sorted_with_dirs_marked_and_dotfiles(tree: Path) -> None:
    result = await LsTool().execute({}, make_ctx(tree))
    assert result.content == ".cache/\n.env\nA.txt\nb.txt\ndir/"
    assert result.details == {"entries": 5, "truncated": False, "shown": 5, "total": 5}


async def test_lists_a_subdirectory(tree: Path) -> None:
    result = await LsTool().execute({"path": "dir"}, make_ctx(tree))
    assert result.content == "inner.txt"


async def test_cap_notes_how_many_were_left_out(tree: Path) -> None:
    result = await LsTool().execute({}, make_ctx(tree, ToolLimits(max_entries=2)))
    assert result.content == ".cache/\n.env\n\n[3 more entries not shown (5 in total)]"
    assert result.details["truncated"] is True


async def test_file_is_refused_pointing_to_read(tree: Path) -> None:
    with pytest.raises(ToolError, match=r"b\.txt is a file, not a directory; use read"):
        await LsTool().execute({"path": "b.txt"}, make_ctx(tree))


async def test_missing_directory(tree: Path) -> None:
    with pytest.raises(ToolError, match=r"dri: no such file or directory; did you mean dir\?"):
        await LsTool().execute({"path": "dri"}, make_ctx(tree))


async def test_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = await LsTool().execute({"path": "empty"}, make_ctx(tmp_path))
    assert result.content == "[empty is empty]"
