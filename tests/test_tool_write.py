from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.write import WriteTool
from tests.tool_fixtures import make_ctx, write_tree


async def write(tmp_path: Path, path: str, content: str):
    return await WriteTool().execute({"path": path, "content": content}, make_ctx(tmp_path))


async def test_creates_file_and_parent_directories(tmp_path: Path) -> None:
    result = await write(tmp_path, "sub/dir/f.txt", "hello\nworld\n")
    assert (tmp_path / "sub/dir/f.txt").read_bytes() == b"hello\nworld\n"
    assert result.content == "wrote 2 lines (12 bytes) to sub/dir/f.txt (created a new file)"
    assert not result.is_error
    assert result.details["created"] is True
    assert "diff" not in result.details


async def test_overwrite_reports_it_and_diffs_the_old_content(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": "old line\nsame\n"})
    result = await write(tmp_path, "f.txt", "new line\nsame\n")
    assert (tmp_path / "f.txt").read_text() == "new line\nsame\n"
    assert result.content == "wrote 2 lines (14 bytes) to f.txt (overwrote the existing file)"
    assert result.details["created"] is False
    diff = result.details["diff"]
    assert "-old line" in diff
    assert "+new line" in diff
    assert "--- a/f.txt" in diff


async def test_counts_lines_bytes_and_keeps_content_exactly(tmp_path: Path) -> None:
    result = await write(tmp_path, "u.txt", "é\r\nno newline")
    assert (tmp_path / "u.txt").read_bytes() == "é\r\nno newline".encode()
    assert result.content.startswith("wrote 2 lines (14 bytes) to u.txt")
    empty = await write(tmp_path, "e.txt", "")
    assert empty.content.startswith("wrote 0 lines (0 bytes) to e.txt")
    one = await write(tmp_path, "one.txt", "x\n")
    assert one.content.startswith("wrote 1 line (2 bytes)")


async def test_directory_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="d is a directory"):
        await write(tmp_path, "d", "x")


async def test_file_in_the_way_of_parent_directory(tmp_path: Path) -> None:
    write_tree(tmp_path, {"blocker": "x"})
    with pytest.raises(ToolError, match="a file is in the way"):
        await write(tmp_path, "blocker/f.txt", "x")
