"""One judgement of a path (`tools.path_target`), made by the approval gate and by the
tools alike: the file the file system opens, symlinks followed before `..`.

The property test builds a workspace with real symlinks (inside, outside, to `.git/`,
absolute, dangling, a loop), generates path strings from names, `..`, `.`, `//`,
absolute prefixes and `~`, and checks for each that the gate's judgement (the target,
and inside / outside / protected) is exactly where the real `write` tool writes.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ink_tui.control.approvals import Approvals
from ink_tui.control.protected_places import ProtectedPlaces
from ink_tui.core.messages import ToolCall
from ink_tui.core.tool_api import ToolError
from ink_tui.tools import path_target as path_target_module
from ink_tui.tools import write as write_module
from ink_tui.tools.edit import EditTool
from ink_tui.tools.path_target import path_target
from ink_tui.tools.read import ReadTool
from ink_tui.tools.write import WriteTool
from tests.tool_fixtures import make_ctx

# -- the case: `a -> x/y` --------------------------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A workspace with `a -> x/y` (relative, two folders deep)."""
    workspace = tmp_path / "ws"
    (workspace / "x" / "y").mkdir(parents=True)
    (workspace / "a").symlink_to("x/y")
    return workspace


def test_dotdot_after_a_symlink_climbs_from_where_it_points(linked: Path) -> None:
    target = path_target(linked, "a/../../escaped.txt")
    assert target.real == linked / "escaped.txt"
    # Read as text, it leaves the workspace: the two readings differ.
    assert target.as_written == linked.parent / "escaped.txt"
    assert target.differs and target.inside and target.shown == "escaped.txt"
    assert path_target(linked, "a/../.ink/config.toml").real == linked / "x/.ink/config.toml"
    # What the file system itself opens for the same text.
    with open(linked / "a/../f.txt", "w") as file:
        file.write("os")
    assert (linked / "x/f.txt").read_text() == "os"
    assert path_target(linked, "a/../f.txt").real == linked / "x/f.txt"


async def test_write_edit_and_read_open_the_file_the_os_would(linked: Path) -> None:
    ctx = make_ctx(linked)
    written = await WriteTool().execute({"path": "a/../new.txt", "content": "one\n"}, ctx)
    assert (linked / "x/new.txt").read_text() == "one\n"
    assert not (linked / "new.txt").exists()
    assert "to x/new.txt" in written.content
    edits = [{"old_text": "one", "new_text": "two"}]
    await EditTool().execute({"path": "a/../new.txt", "edits": edits}, ctx)
    assert (linked / "x/new.txt").read_text() == "two\n"
    read = await ReadTool().execute({"path": "a/./../new.txt"}, ctx)
    assert read.content == "two"


def test_a_symlink_loop_then_a_double_slash_stays_at_the_loop(linked: Path) -> None:
    """`os.path.realpath` (3.11, 3.12) turns `loop//a/b` into `/a/b`: a write at the
    root of the machine. The judgement stops at the loop, and the write fails on it."""
    (linked / "loop").symlink_to("loop")
    target = path_target(linked, "loop//a/b")
    assert target.real == linked / "loop" / "a" / "b" and target.inside
    from ink_tui.tools.write import _write

    with pytest.raises(ToolError, match=r"symbolic links|it loops"):
        _write(target, target.shown, b"data")


def test_a_symlink_put_on_the_path_after_it_was_resolved_is_not_followed(
    linked: Path, tmp_path: Path
) -> None:
    """The tools open the resolved path with no symlink followed: one swapped in between
    the judgement and the open makes the open fail, nothing is written elsewhere."""
    from ink_tui.tools.write import _write

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = path_target(linked, "x/y/f.txt")
    (linked / "x" / "y").rmdir()
    (linked / "x" / "y").symlink_to(elsewhere)
    with pytest.raises(ToolError, match="a symlink is on the path"):
        _write(target, target.shown, b"data")
    assert list(elsewhere.iterdir()) == []
    # And a symlink at the file itself.
    (linked / "x" / "y").unlink()
    (linked / "x" / "y").mkdir()
    (linked / "x" / "y" / "f.txt").symlink_to(elsewhere / "g.txt")
    with pytest.raises(ToolError, match="a symlink is on the path"):
        _write(target, target.shown, b"data")
    assert not (elsewhere / "g.txt").exists()


def test_without_dir_fd_it_resolves_again_and_refuses_a_change(
    linked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(path_target_module, "_WALKS", False)
    from ink_tui.tools.write import _write

    target = path_target(linked, "x/y/f.txt")
    _write(target, target.shown, b"first")
    assert (linked / "x/y/f.txt").read_bytes() == b"first"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(linked / "x" / "y")
    (linked / "x" / "y").symlink_to(elsewhere)
    with pytest.raises(ToolError, match="a symlink is on the path"):
        _write(target, target.shown, b"data")
    assert list(elsewhere.iterdir()) == []


# -- the property -------------------------------------------------------------------------

# Folders above each example's root, so that no generated path (at most six pieces, each
# climbing at most one level) can reach outside this test's own temporary folder.
_PADDING = 9
_MARK = "written-by-the-property-test"

NAMES = ["a", "up", "abs", "g", "home", "self", "back", "dang", "loop", "x", "y", "sub"]
NAMES += ["f.txt", "new.txt", "hooks", ".git", ".GIT", ".ink", ".config", "ink"]
NAMES += ["extensions", "outside", "ws", "data"]
PIECES = [*NAMES, "..", ".", ""]  # "" between two slashes: a repeated slash
PREFIXES = [None, "WS", "ROOT", "OUT", "~", "~/"]


def _build(root: Path) -> Path:
    """The tree of one example; returns the workspace."""
    ws = root / "ws"
    for folder in ("x/y", "sub", ".git/hooks", ".ink", ".config/ink/extensions"):
        (ws / folder).mkdir(parents=True)
    for folder in ("outside/deep", "outside/data", "home"):
        (root / folder).mkdir(parents=True)
    (ws / "f.txt").write_text("file\n")
    (ws / ".git/hooks/pre-commit").write_text("hook\n")
    links = {
        "a": "x/y",  # inside, two deep (the case)
        "up": "../outside",  # relative, to outside
        "abs": str(root / "outside" / "deep"),  # absolute, to outside
        "g": ".git",  # to a protected folder
        "home": str(root / "home"),  # absolute, to outside (where `~` is)
        "self": ".",
        "dang": "nowhere/new",  # dangling: writing through it makes its target
        "loop": "loop",
    }
    for name, to in links.items():
        (ws / name).symlink_to(to)
    (ws / "x" / "back").symlink_to("../..")  # from ws/x to the example's root
    return ws


def _marked(top: Path) -> list[Path]:
    """The files under `top` that hold `_MARK` (no symlink followed)."""
    found: list[Path] = []
    folders = [str(top)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif _holds_mark(entry):
                    found.append(Path(entry.path))
    return found


def _holds_mark(entry: os.DirEntry[str]) -> bool:
    if not entry.is_file(follow_symlinks=False):
        return False
    if entry.stat(follow_symlinks=False).st_size != len(_MARK):
        return False
    return Path(entry.path).read_text(errors="replace") == _MARK


def _place(path: Path, root: Path) -> str:
    """Inside / outside / protected, worked out here from the tree's layout."""
    ws = root / "ws"
    if path.is_relative_to(ws):
        parts = path.relative_to(ws).parts
        if any(part.casefold() in (".git", ".ink") for part in parts):
            return "protected"
        if path.is_relative_to(ws / ".config" / "ink"):
            return "protected"
        return "inside"
    if path.is_relative_to(root / "outside" / "data"):
        return "protected"
    return "outside"


@dataclass(frozen=True, slots=True)
class Tree:
    top: Path
    root: Path
    ws: Path
    gate: Approvals
    runner: asyncio.Runner
    # The files the tree was built with, to put back after each example.
    originals: dict[Path, str]


@pytest.fixture(scope="module")
def tree() -> Iterator[Tree]:
    """The examples' tree, `_PADDING` folders deep in a temporary folder of its own, with
    HOME in it (`~`), one gate and one event loop for every example."""
    top = Path(os.path.realpath(tempfile.mkdtemp(prefix="ink-path-property-")))
    root = top.joinpath(*["p"] * _PADDING, "root")
    root.mkdir(parents=True)
    ws = _build(root)
    protected = ProtectedPlaces(
        ws, config_dir=ws / ".config" / "ink", data_dir=root / "outside" / "data"
    )
    gate = Approvals(ws, lambda event: None, policy="edits", protected=protected)
    originals = {path: path.read_text() for path in root.rglob("*") if path.is_file()}
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(root / "home")
    try:
        with asyncio.Runner() as runner:
            yield Tree(top, root, ws, gate, runner, originals)
    finally:
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = home
        shutil.rmtree(top, ignore_errors=True)


# A relative path never starts with "" (that would make it "/...", the real root).
paths = st.tuples(
    st.sampled_from(PREFIXES),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=6),
).filter(lambda spec: spec[0] is not None or spec[1][0] != "")


@given(spec=paths)
def test_the_gates_judgement_is_where_the_write_tool_writes(
    tree: Tree, spec: tuple[str | None, list[str]]
) -> None:
    prefix, pieces = spec
    root, ws = tree.root, tree.ws
    starts = {"WS": str(ws), "ROOT": str(root), "OUT": str(root / "outside"), "~": "~"}
    text = "/".join(pieces)
    if prefix is None:
        raw = text
    elif prefix == "~/":
        raw = "~//" + text
    else:
        raw = f"{starts[prefix]}/{text}"
    judgement = tree.gate.judge(raw)
    verdict = tree.gate.verdict(ToolCall("c1", "write", {"path": raw, "content": _MARK}))
    try:
        # A safety net, not the check: a resolution gone wrong must fail here rather
        # than write somewhere on the machine outside this test's folder.
        with mock.patch.object(write_module, "open_resolved", _inside(tree.top)):
            tree.runner.run(WriteTool().execute({"path": raw, "content": _MARK}, make_ctx(ws)))
        failed = None
    except ToolError as error:
        failed = str(error)
    changed = _marked(tree.top)
    # Put the tree back for the next example (folders the write made stay, empty).
    for path in changed:
        if path in tree.originals:
            path.write_text(tree.originals[path])
        else:
            path.unlink()
    if failed is not None:
        assert changed == [], (raw, failed)
        return
    assert changed == [judgement.target.real], raw
    place = _place(changed[0], root)
    assert judgement.place == place, raw
    # The gate lets a write through without asking only into an ordinary file inside.
    if verdict is None:
        assert place == "inside", raw
    if place != "inside":
        assert verdict is not None and not verdict.by_rule, raw


def _inside(top: Path) -> Callable[..., int]:
    real_open = write_module.open_resolved

    def open_inside(real: Path, *args: Any, **kwargs: Any) -> int:
        assert real.is_relative_to(top), f"the write tool opened {real}"
        return real_open(real, *args, **kwargs)

    return open_inside
