from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.edit import EditTool
from tests.tool_fixtures import make_ctx, write_tree

SOURCE = "def greet(name):\n    print('hello', name)\n\n\ndef part():\n    return 'bye'\n"


async def edit(tmp_path: Path, path: str, *pairs: tuple[str, str]):
    edits = [{"old_text": old, "new_text": new} for old, new in pairs]
    return await EditTool().execute({"path": path, "edits": edits}, make_ctx(tmp_path))


async def test_single_edit_applies_and_shows_diff(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": SOURCE})
    result = await edit(tmp_path, "m.py", ("'hello'", "'hi'"))
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("'hello'", "'hi'")
    assert result.content.startswith("applied 1 edit to m.py\n\n--- a/m.py\n+++ b/m.py\n")
    assert "-    print('hello', name)\n+    print('hi', name)" in result.content
    assert "-    print('hello', name)\n+    print('hi', name)" in result.details["diff"]
    assert not result.is_error


async def test_edits_are_matched_against_the_original(tmp_path: Path) -> None:
    # Edit 1 creates a second "beta"; edit 2 still refers to the single original one.
    write_tree(tmp_path, {"f.txt": "alpha\nbeta\n"})
    result = await edit(tmp_path, "f.txt", ("alpha", "beta"), ("beta", "gamma"))
    assert (tmp_path / "f.txt").read_text() == "beta\ngamma\n"
    assert result.content.startswith("applied 2 edits to f.txt")


async def test_not_found_names_the_edit_and_writes_nothing(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": SOURCE})
    with pytest.raises(ToolError) as caught:
        await edit(tmp_path, "m.py", ("'hello'", "'hi'"), ("missing text", "x"))
    message = str(caught.value)
    assert "no edits were applied" in message
    assert "edit 2: old_text not found in m.py" in message
    assert "edit 1" not in message
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_ambiguous_match_says_how_many_times(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": SOURCE})
    with pytest.raises(ToolError, match=r"edit 1: old_text found 2 times in m.py; add more"):
        await edit(tmp_path, "m.py", ("def ", "async def "))
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_overlapping_occurrences_count_as_ambiguous(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": "aaa\n"})
    with pytest.raises(ToolError, match=r"edit 1: old_text found 2 times"):
        await edit(tmp_path, "f.txt", ("aa", "b"))


async def test_overlapping_edits_are_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": SOURCE})
    with pytest.raises(ToolError, match=r"edit 2: old_text overlaps edit 1"):
        await edit(tmp_path, "m.py", ("def greet(name):", "def greet(who):"), ("greet", "hi"))
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_all_or_nothing_reports_every_failure(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.py": SOURCE})
    with pytest.raises(ToolError) as caught:
        await edit(tmp_path, "m.py", ("return 'bye'", "return 'ciao'"), ("zzz", ""), ("def ", ""))
    message = str(caught.value)
    assert "edit 2: old_text not found" in message
    assert "edit 3: old_text found 2 times" in message
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_crlf_file_keeps_crlf(tmp_path: Path) -> None:
    write_tree(tmp_path, {"dos.txt": "one\r\ntwo\r\nthree\r\n"})
    result = await edit(tmp_path, "dos.txt", ("one\ntwo", "uno\ndos\nextra"))
    assert (tmp_path / "dos.txt").read_bytes() == b"uno\r\ndos\r\nextra\r\nthree\r\n"
    assert "\r" not in result.details["diff"]


async def test_missing_trailing_newline_is_preserved(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": "first\nlast"})
    await edit(tmp_path, "f.txt", ("first", "1st"))
    assert (tmp_path / "f.txt").read_bytes() == b"1st\nlast"
    write_tree(tmp_path, {"g.txt": "first\nlast\n"})
    await edit(tmp_path, "g.txt", ("last", "end"))
    assert (tmp_path / "g.txt").read_bytes() == b"first\nend\n"


async def test_edit_that_changes_nothing_is_an_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"f.txt": "same\n"})
    with pytest.raises(ToolError, match="unchanged"):
        await edit(tmp_path, "f.txt", ("same", "same"))


async def test_binary_file_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"b.bin": b"abc\x00def"})
    with pytest.raises(ToolError, match=r"b\.bin is a binary file"):
        await edit(tmp_path, "b.bin", ("abc", "x"))
    assert (tmp_path / "b.bin").read_bytes() == b"abc\x00def"


async def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"nope\.py: no such file"):
        await edit(tmp_path, "nope.py", ("a", "b"))


async def test_long_diff_is_shortened_in_content_only(tmp_path: Path) -> None:
    original = "".join(f"line {n}\n" for n in range(300))
    write_tree(tmp_path, {"f.txt": original})
    replacement = "".join(f"LINE {n}\n" for n in range(300))
    result = await edit(tmp_path, "f.txt", (original, replacement))
    assert "[diff preview cut; the file was fully edited]" in result.content
    assert "+LINE 299" in result.details["diff"]
    assert "+LINE 299" not in result.content
