from __future__ import annotations

import os
from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolError, ToolLimits
from ink_tui.tools.read import ReadTool
from tests.tool_fixtures import make_ctx, write_tree


def numbered(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


async def read(tmp_path: Path, limits: ToolLimits | None = None, **args: object):
    return await ReadTool().execute(dict(args), make_ctx(tmp_path, limits))


async def test_small_file_is_returned_whole_without_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.txt": "alpha\nbeta\n"})
    result = await read(tmp_path, path="a.txt")
    assert result.content == "alpha\nbeta"
    assert not result.is_error
    assert result.details["total_lines"] == 2
    assert result.details["truncated"] is False


async def test_line_cap_keeps_head_and_says_how_to_continue(tmp_path: Path) -> None:
    write_tree(tmp_path, {"big.txt": numbered(5400)})
    result = await read(tmp_path, path="big.txt")
    body, note = result.content.split("\n\n")
    assert body.splitlines() == [f"line {n}" for n in range(1, 2001)]
    assert note == "[showing lines 1-2000 of 5400; use offset=2001 to continue]"
    assert result.details["truncated"] is True


async def test_offset_pages_through_to_the_end(tmp_path: Path) -> None:
    write_tree(tmp_path, {"big.txt": numbered(5400)})
    middle = await read(tmp_path, path="big.txt", offset=2001)
    assert middle.content.splitlines()[0] == "line 2001"
    assert middle.content.endswith("[showing lines 2001-4000 of 5400; use offset=4001 to continue]")
    last = await read(tmp_path, path="big.txt", offset=4001)
    lines = last.content.splitlines()
    assert lines[0] == "line 4001"
    assert lines[1399] == "line 5400"
    assert lines[-1] == "[showing lines 4001-5400 of 5400; end of file]"


async def test_limit_asks_for_fewer_lines(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": numbered(30)})
    result = await read(tmp_path, path="f.txt", offset=10, limit=5)
    assert result.content == (
        "line 10\nline 11\nline 12\nline 13\nline 14\n\n"
        "[showing lines 10-14 of 30; use offset=15 to continue]"
    )


async def test_byte_cap_cuts_on_a_line_boundary(tmp_path: Path) -> None:
    # 99 characters + newline = 100 bytes a line; 512 lines make 51,199 bytes.
    write_tree(tmp_path, {"wide.txt": "".join(f"{n:099d}\n" for n in range(1000))})
    result = await read(tmp_path, path="wide.txt")
    body, note = result.content.split("\n\n")
    assert len(body.splitlines()) == 512
    assert len(body.encode()) <= 50 * 1024
    assert note == "[showing lines 1-512 of 1000 (50 KB limit); use offset=513 to continue]"


async def test_a_line_longer_than_the_byte_cap_is_cut_with_a_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {"long.txt": "x" * 5000 + "\nshort\n"})
    result = await read(tmp_path, ToolLimits(max_bytes=1000), path="long.txt")
    assert result.content.startswith("x" * 1000 + "\n\n")
    assert "x" * 1001 not in result.content
    assert "[line 1 is 5000 bytes, more than the 1000 bytes cap" in result.content
    assert result.content.endswith("[showing line 1 of 2; use offset=2 to continue]")
    follow = await read(tmp_path, ToolLimits(max_bytes=1000), path="long.txt", offset=2)
    assert follow.content.startswith("short\n\n")


async def test_cut_never_splits_a_multibyte_character(tmp_path: Path) -> None:
    write_tree(tmp_path, {"u.txt": "é" * 600 + "\n"})  # 1200 bytes
    result = await read(tmp_path, ToolLimits(max_bytes=1001), path="u.txt")
    assert result.content.startswith("é" * 500 + "\n\n[line 1 is 1200 bytes")


async def test_crlf_line_endings_are_not_shown(tmp_path: Path) -> None:
    write_tree(tmp_path, {"dos.txt": "one\r\ntwo\r\n"})
    result = await read(tmp_path, path="dos.txt")
    assert result.content == "one\ntwo"


async def test_last_line_without_newline_counts(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": "a\nb"})
    assert (await read(tmp_path, path="f.txt")).content == "a\nb"
    with pytest.raises(ToolError, match=r"offset 3 is beyond the end of f.txt: it has 2 lines"):
        await read(tmp_path, path="f.txt", offset=3)


async def test_total_is_counted_past_the_window(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": numbered(10) + "tail without newline"})
    result = await read(tmp_path, path="f.txt", limit=2)
    assert result.content.endswith("[showing lines 1-2 of 11; use offset=3 to continue]")


async def test_empty_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"empty.txt": ""})
    result = await read(tmp_path, path="empty.txt")
    assert result.content == "[empty.txt is empty]"
    assert not result.is_error


async def test_binary_file_with_nul_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"img.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"})
    with pytest.raises(ToolError, match=r"img.png is a binary file"):
        await read(tmp_path, path="img.png")


async def test_non_utf8_file_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"latin1.txt": "café\n".encode("latin-1")})
    with pytest.raises(ToolError, match=r"latin1.txt is a binary file"):
        await read(tmp_path, path="latin1.txt")


async def test_invalid_utf8_after_the_window_is_still_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"late.txt": numbered(3000).encode() + b"\xff\xfe\n"})
    with pytest.raises(ToolError, match=r"late.txt is a binary file"):
        await read(tmp_path, path="late.txt")


async def test_directory_is_refused_pointing_to_ls(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match=r"src is a directory.*use ls"):
        await read(tmp_path, path="src")


async def test_missing_file_suggests_similar_names(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/main.py": "x\n"})
    with pytest.raises(ToolError) as caught:
        await read(tmp_path, path="src/mian.py")
    assert str(caught.value) == (
        "src/mian.py: no such file or directory; did you mean src/main.py?"
    )


async def test_missing_directory_says_so(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"nope/x.py: no such file or directory"):
        await read(tmp_path, path="nope/x.py")


async def test_offset_beyond_end_gives_line_count(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": numbered(3)})
    with pytest.raises(ToolError, match=r"offset 9 is beyond the end of f.txt: it has 3 lines"):
        await read(tmp_path, path="f.txt", offset=9)


async def test_absolute_and_home_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {"home/notes.txt": "from home\n", "ws/a.txt": "in ws\n"})
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    workspace = tmp_path / "ws"
    assert (await read(workspace, path="~/notes.txt")).content == "from home"
    absolute = await read(workspace, path=str(workspace / "a.txt"))
    assert absolute.content == "in ws"
    assert absolute.details["path"] == "a.txt"


async def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match=r"pipe is not a regular file"):
        await read(tmp_path, path="pipe")
