from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolError, ToolLimits, ToolResult
from ink_tui.tools.grep import GrepTool
from ink_tui.tools.grep_ripgrep import find_ripgrep
from tests.tool_fixtures import make_ctx, write_tree

HAVE_RG = find_ripgrep() is not None
needs_rg = pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not installed")

BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(True, id="ripgrep", marks=needs_rg),
]


@pytest.fixture(params=BACKENDS)
def use_ripgrep(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n",
            "a.py": "import os\nfoo = 1\n",
            "B.py": "FOO = 2\n",
            "crlf.txt": "foo\r\nbar\r\n",
            "odd:name.txt": "foo odd\n",
            "sub/.gitignore": "deep/\n!keep.log\n",
            "sub/c.py": "def foo():\n    return 'foo'\n",
            "sub/deep/d.py": "foo ignored by nested gitignore\n",
            "sub/keep.log": "foo kept by negation\n",
            "x.log": "foo ignored\n",
            "build/e.py": "foo ignored dir\n",
            ".hidden/h.txt": "foo hidden\n",
            ".git/config": "foo in git\n",
            "bin.dat": b"foo\x00bar\n",
        },
    )
    return tmp_path


async def grep(root: Path, use_ripgrep: bool, limits: ToolLimits | None = None, **args: object):
    return await GrepTool(use_ripgrep=use_ripgrep).execute(dict(args), make_ctx(root, limits))


EXPECTED_FOO = [
    ".hidden/h.txt:1: foo hidden",
    "a.py:2: foo = 1",
    "crlf.txt:1: foo",
    "odd:name.txt:1: foo odd",
    "sub/c.py:1: def foo():",
    "sub/c.py:2:     return 'foo'",
    "sub/keep.log:1: foo kept by negation",
]


async def test_finds_matches_respecting_gitignore_and_skipping_binary(
    tree: Path, use_ripgrep: bool
) -> None:
    result = await grep(tree, use_ripgrep, pattern="foo")
    assert result.content.splitlines() == EXPECTED_FOO
    assert result.details["backend"] == ("ripgrep" if use_ripgrep else "python")
    assert result.details["matches"] == len(EXPECTED_FOO)


async def test_ignore_case(tree: Path, use_ripgrep: bool) -> None:
    result = await grep(tree, use_ripgrep, pattern="^foo", ignore_case=True)
    assert result.content.splitlines() == [
        ".hidden/h.txt:1: foo hidden",
        "B.py:1: FOO = 2",
        "a.py:2: foo = 1",
        "crlf.txt:1: foo",
        "odd:name.txt:1: foo odd",
        "sub/keep.log:1: foo kept by negation",
    ]


async def test_glob_without_slash_matches_at_any_depth(tree: Path, use_ripgrep: bool) -> None:
    result = await grep(tree, use_ripgrep, pattern="foo", glob="*.py")
    assert result.content.splitlines() == [
        "a.py:2: foo = 1",
        "sub/c.py:1: def foo():",
        "sub/c.py:2:     return 'foo'",
    ]


async def test_anchored_and_negated_globs(tree: Path, use_ripgrep: bool) -> None:
    anchored = await grep(tree, use_ripgrep, pattern="foo", glob="sub/*.py")
    assert anchored.content.splitlines() == [
        "sub/c.py:1: def foo():",
        "sub/c.py:2:     return 'foo'",
    ]
    negated = await grep(tree, use_ripgrep, pattern="foo", glob="!sub")
    assert negated.content.splitlines() == EXPECTED_FOO[:4]


async def test_glob_overrides_gitignore_like_ripgrep(tree: Path, use_ripgrep: bool) -> None:
    result = await grep(tree, use_ripgrep, pattern="foo", glob="*.log")
    assert result.content.splitlines() == [
        "sub/keep.log:1: foo kept by negation",
        "x.log:1: foo ignored",
    ]


async def test_search_a_subdirectory_or_a_file(tree: Path, use_ripgrep: bool) -> None:
    sub = await grep(tree, use_ripgrep, pattern="foo", path="sub")
    assert sub.content.splitlines() == EXPECTED_FOO[4:]
    one = await grep(tree, use_ripgrep, pattern="return", path="sub/c.py")
    assert one.content == "sub/c.py:2:     return 'foo'"
    # A path named explicitly is searched even when .gitignore would skip it.
    ignored = await grep(tree, use_ripgrep, pattern="foo", path="build")
    assert ignored.content == "build/e.py:1: foo ignored dir"


async def test_no_matches(tree: Path, use_ripgrep: bool) -> None:
    result = await grep(tree, use_ripgrep, pattern="zzz")
    assert result.content == "no matches for 'zzz' in ."
    assert not result.is_error


async def test_invalid_regex_is_a_tool_error(tree: Path, use_ripgrep: bool) -> None:
    with pytest.raises(ToolError, match=r"(?s)invalid regex '\(foo'.*(unclosed|missing \))"):
        await grep(tree, use_ripgrep, pattern="(foo")


async def test_missing_path_and_binary_file(tree: Path, use_ripgrep: bool) -> None:
    with pytest.raises(ToolError, match=r"nope: no such file or directory"):
        await grep(tree, use_ripgrep, pattern="foo", path="nope")
    with pytest.raises(ToolError, match=r"bin\.dat is a binary file"):
        await grep(tree, use_ripgrep, pattern="foo", path="bin.dat")


async def test_cap_stops_with_a_note(tree: Path, use_ripgrep: bool) -> None:
    result = await grep(tree, use_ripgrep, ToolLimits(max_entries=3), pattern="foo")
    body, note = result.content.split("\n\n")
    assert body.splitlines() == EXPECTED_FOO[:3]
    assert note.startswith("[stopped after 3 matches; more exist.")
    assert result.details["truncated"] is True


async def test_long_lines_are_cut(tmp_path: Path, use_ripgrep: bool) -> None:
    write_tree(tmp_path, {"min.js": "foo" + "x" * 997 + "\n"})
    result = await grep(tmp_path, use_ripgrep, pattern="foo")
    assert result.content == "min.js:1: foo" + "x" * 497 + " … [line cut: 1000 chars]"


@needs_rg
async def test_both_backends_agree(tree: Path) -> None:
    queries: list[dict[str, object]] = [
        {"pattern": "foo"},
        {"pattern": r"o+\b", "ignore_case": True},
        {"pattern": "foo", "glob": "**/*.py"},
        {"pattern": "foo", "glob": "*.log"},
        {"pattern": "foo", "path": "sub"},
        {"pattern": "ba[rz]"},
    ]
    for query in queries:
        results: list[ToolResult] = [
            await GrepTool(use_ripgrep=use_ripgrep).execute(dict(query), make_ctx(tree))
            for use_ripgrep in (False, True)
        ]
        assert results[0].content == results[1].content, query
