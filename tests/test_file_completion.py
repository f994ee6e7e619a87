from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from ink_tui.ui import file_completion
from ink_tui.ui.file_completion import (
    FileIndex,
    FileToken,
    current_token,
    list_workspace,
    rank_paths,
)


def make_tree(root: Path, files: list[str]) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    return root


# -- listing -------------------------------------------------------------------------


def test_lists_files_and_their_folders_respecting_gitignore(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        [
            ".gitignore",
            "README.md",
            "src/main.py",
            "src/deep/util.py",
            "build/out.bin",
            "debug.log",
            "docs/keep.log",
            "docs/.gitignore",
        ],
    )
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "docs" / ".gitignore").write_text("!keep.log\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    paths = list_workspace(tmp_path)
    assert sorted(paths) == sorted(
        [
            ".gitignore",
            "README.md",
            "docs/",
            "docs/.gitignore",
            "docs/keep.log",
            "src/",
            "src/deep/",
            "src/deep/util.py",
            "src/main.py",
        ]
    )


def test_listing_is_capped(tmp_path: Path) -> None:
    make_tree(tmp_path, [f"dir{n}/file{m}.txt" for n in range(5) for m in range(5)])
    paths = list_workspace(tmp_path, max_paths=7)
    assert len(paths) == 7
    # Folders come before the files they hold.
    assert paths[0] == "dir0/"


def test_a_missing_workspace_lists_nothing(tmp_path: Path) -> None:
    assert list_workspace(tmp_path / "gone") == []


# -- ranking -------------------------------------------------------------------------


PATHS = [
    "README.md",
    "docs/",
    "docs/README.md",
    "docs/reading-list.md",
    "src/",
    "src/main.py",
    "src/remote/",
    "src/remote/api.py",
    "tests/test_main.py",
    "area.txt",
]


def test_rank_prefix_then_component_prefix_then_fuzzy_shorter_first() -> None:
    assert rank_paths(PATHS, "REA") == [
        # prefix of the whole path
        "README.md",
        # prefix of a later component, shorter first
        "docs/README.md",
        "docs/reading-list.md",
        # subsequence only ("r…e…a")
        "area.txt",
        "src/remote/api.py",
    ]


def test_rank_with_a_folder_in_the_fragment() -> None:
    assert rank_paths(PATHS, "src/") == ["src/main.py", "src/remote/", "src/remote/api.py"]
    assert rank_paths(PATHS, "src/re")[:2] == ["src/remote/", "src/remote/api.py"]


def test_rank_fuzzy_and_limit() -> None:
    assert rank_paths(PATHS, "smp") == ["src/main.py", "src/remote/api.py", "tests/test_main.py"]
    assert rank_paths(PATHS, "", limit=3) == ["src/", "docs/", "area.txt"]
    assert rank_paths(PATHS, "zzz") == []


# -- the token under the cursor --------------------------------------------------------


def test_current_token_at_start_and_after_whitespace() -> None:
    assert current_token("@REA", 4) == FileToken(start=0, end=4, fragment="REA")
    assert current_token("look at @src/ma please", 15) == FileToken(8, 15, "src/ma")
    assert current_token("see\n@x", 6) == FileToken(4, 6, "x")
    assert current_token("@", 1) == FileToken(0, 1, "")


def test_current_token_cursor_inside_a_word_covers_the_whole_word() -> None:
    # Cursor after "@sr" in "@src/main.py": fragment up to the cursor, span to the end.
    assert current_token("@src/main.py and", 3) == FileToken(0, 12, "sr")


def test_no_token_for_mail_addresses_or_outside_the_word() -> None:
    assert current_token("me@example.com", 14) is None
    assert current_token("@README.md ", 11) is None  # after the blank
    assert current_token("x @a", 2) is None  # before the @
    assert current_token("", 0) is None
    assert current_token("hello", 5) is None


# -- the index -------------------------------------------------------------------------


async def test_index_builds_in_a_thread_and_refreshes_when_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, ["README.md"])
    now = [100.0]
    threads: list[str] = []
    real = file_completion.list_workspace

    def spy(workspace: Path, max_paths: int) -> list[str]:
        threads.append(threading.current_thread().name)
        return real(workspace, max_paths)

    monkeypatch.setattr(file_completion, "list_workspace", spy)
    index = FileIndex(tmp_path, max_age=5.0, clock=lambda: now[0])
    assert index.is_stale
    assert index.matches("REA") == []  # nothing listed yet
    assert await index.refresh()
    assert index.matches("REA") == ["README.md"]
    assert threads and threads[0] != threading.main_thread().name

    make_tree(tmp_path, ["REALLY.txt"])
    now[0] += 4.0
    assert not index.is_stale
    assert not await index.refresh()  # fresh: not walked again
    assert index.matches("REA") == ["README.md"]
    now[0] += 2.0
    assert index.is_stale
    assert await index.refresh()
    assert index.matches("REA") == ["README.md", "REALLY.txt"]
    assert len(threads) == 2


async def test_concurrent_refreshes_share_one_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, ["a.txt"])
    calls: list[int] = []
    real = file_completion.list_workspace

    def spy(workspace: Path, max_paths: int) -> list[str]:
        calls.append(1)
        return real(workspace, max_paths)

    monkeypatch.setattr(file_completion, "list_workspace", spy)
    index = FileIndex(tmp_path)
    results = await asyncio.gather(index.refresh(), index.refresh(), index.refresh())
    assert results == [True, True, True]
    assert len(calls) == 1
    assert index.paths == ["a.txt"]
