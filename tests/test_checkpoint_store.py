"""CheckpointStore on real temp workspaces with real git: snapshot, diff, restore, undo,
.gitignore, size limits and aborts."""

from __future__ import annotations

import asyncio
import fcntl
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from ink_tui.checkpoints import (
    CheckpointError,
    CheckpointLimits,
    CheckpointStore,
    FileChange,
)
from ink_tui.core.abort import AbortController, AbortError

State = dict[str, tuple[str, bool, bytes]]


def tree_state(root: Path) -> State:
    """Every file and link under `root` but `.git`: kind, executable bit, content."""
    state: State = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name != ".git" or Path(folder) != root]
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            full = Path(folder, name)
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                state[rel] = ("link", False, os.readlink(full).encode())
            else:
                executable = bool(full.stat().st_mode & stat.S_IXUSR)
                state[rel] = ("file", executable, full.read_bytes())
    return state


def dirs_of(root: Path) -> set[str]:
    return {
        Path(folder).relative_to(root).as_posix()
        for folder, _, _ in os.walk(root)
        if ".git" not in Path(folder).relative_to(root).parts
    }


def git_in(workspace: Path, *args: str) -> str:
    """The user's own git in `workspace` (no user config)."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(workspace.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "user",
        "GIT_AUTHOR_EMAIL": "user@example.com",
        "GIT_COMMITTER_NAME": "user",
        "GIT_COMMITTER_EMAIL": "user@example.com",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    done = subprocess.run(
        ["git", *args], cwd=workspace, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def store_git(store: CheckpointStore, *args: str) -> str:
    """Read the store with the store's own isolated git (for checks only)."""
    done = subprocess.run(
        store._git.argv(args), env=store._git.env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_project(root: Path, *, as_repo: bool) -> None:
    root.mkdir()
    (root / "README.md").write_text("# Project\n\nline one\nline two\n")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "core.py").write_text("def f():\n    return 1\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / "data.bin").write_bytes(bytes(range(256)))
    (root / "docs").mkdir()
    (root / "docs" / "a.txt").write_text("a\n")
    os.symlink("src/pkg/core.py", root / "core-link")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "debug.log").write_text("ignored at first\n")
    if as_repo:
        git_in(root, "init", "-q", "-b", "main")
        git_in(root, "add", "-A")
        git_in(root, "commit", "-q", "-m", "first")


def new_store(
    tmp_path: Path, workspace: Path, session: str = "s1", **limits: int
) -> CheckpointStore:
    limited = CheckpointLimits(**limits)
    return CheckpointStore(
        workspace, tmp_path / "data" / "ws.git", session_id=session, limits=limited
    )


def change_everything(ws: Path) -> None:
    """After a checkpoint: create, change, delete, and move things around."""
    (ws / "README.md").write_text("# Project\n\nline one changed\nline two\nline three\n")
    (ws / "run.sh").unlink()
    (ws / "docs" / "a.txt").unlink()
    (ws / "docs").rmdir()
    (ws / "core-link").unlink()
    (ws / "new" / "deeper" / "still").mkdir(parents=True)
    (ws / "new" / "deeper" / "still" / "x.txt").write_text("new\n")
    (ws / "new" / "top.txt").write_text("top\n")
    (ws / "data.bin").write_bytes(bytes(range(255, -1, -1)))
    (ws / "src" / "pkg" / "core.py").chmod(0o755)
    (ws / "more.log").write_text("ignored, created later\n")
    (ws / "debug.log").write_text("ignored, changed later\n")


@pytest.mark.parametrize("as_repo", [False, True], ids=["plain", "git-repo"])
async def test_restore_brings_the_checkpoint_back_and_restoring_before_undoes_it(
    tmp_path: Path, as_repo: bool
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=as_repo)
    store = new_store(tmp_path, ws)
    checkpoint = await store.snapshot()
    at_checkpoint = tree_state(ws)
    dirs_at_checkpoint = dirs_of(ws)

    change_everything(ws)
    changed = tree_state(ws)
    restored = await store.restore(checkpoint)

    now = tree_state(ws)
    # Ignored files are left as they are, created or changed.
    assert now.pop("more.log") == changed["more.log"]
    assert now.pop("debug.log") == changed["debug.log"]
    expected = {p: v for p, v in at_checkpoint.items() if p != "debug.log"}
    assert now == expected
    assert now["run.sh"] == ("file", True, b"#!/bin/sh\necho run\n")
    assert now["core-link"] == ("link", False, b"src/pkg/core.py")
    assert (ws / "core-link").is_symlink()
    assert now["src/pkg/core.py"][1] is False
    # The new nested directories went with their files; the deleted one came back.
    assert dirs_of(ws) == dirs_at_checkpoint
    statuses = {c.path: c.status for c in restored.changes}
    assert statuses == {
        "README.md": "modified",
        "core-link": "added",
        "data.bin": "modified",
        "docs/a.txt": "added",
        "new/deeper/still/x.txt": "deleted",
        "new/top.txt": "deleted",
        "run.sh": "added",
        "src/pkg/core.py": "modified",
    }
    assert restored.before != checkpoint

    undo = await store.restore(restored.before)
    assert tree_state(ws) == changed
    assert {c.path for c in undo.changes} == set(statuses)


async def test_an_unchanged_workspace_gives_the_same_commit_and_the_ref_follows(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    assert len(first) == 40 and int(first, 16) >= 0
    assert await store.snapshot() == first
    (ws / "README.md").write_text("changed\n")
    second = await store.snapshot()
    assert second != first
    assert await store.snapshot() == second
    assert store_git(store, "rev-parse", "refs/ink/s1").strip() == second
    assert store_git(store, "rev-parse", f"{second}^").strip() == first
    # The first commit of a session has no parent.
    assert store_git(store, "rev-list", "--count", "refs/ink/s1").strip() == "2"
    assert (tmp_path / "data" / "ws.git" / "index-s1").is_file()


async def test_a_new_session_starts_from_the_newest_index_and_has_its_own_ref(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    one = new_store(tmp_path, ws, "one")
    first = await one.snapshot()
    index_one = (tmp_path / "data" / "ws.git" / "index-one").read_bytes()
    two = new_store(tmp_path, ws, "two")
    second = await two.snapshot()
    # Its own commit (no parent), with the same tree: the seeded index was up to date.
    assert second != first
    assert store_git(two, "rev-parse", f"{second}^{{tree}}") == store_git(
        one, "rev-parse", f"{first}^{{tree}}"
    )
    assert store_git(two, "rev-list", "--count", "refs/ink/two").strip() == "1"
    assert store_git(one, "rev-parse", "refs/ink/one").strip() == first
    assert (tmp_path / "data" / "ws.git" / "index-two").read_bytes() == index_one
    assert await two.diff(first, second) == []


async def test_diff_counts_lines_and_binary_files_have_none(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    store = new_store(tmp_path, ws)
    before = await store.snapshot()
    (ws / "README.md").write_text("# Project\n\nline one\nline 2\nline three\nfour\n")
    (ws / "data.bin").write_bytes(b"\0\1\2")
    (ws / "docs" / "a.txt").unlink()
    (ws / "fresh.txt").write_text("1\n2\n3\n")
    after = await store.snapshot()
    assert await store.diff(before, after) == [
        FileChange("README.md", "modified", 3, 1),
        FileChange("data.bin", "modified", None, None),
        FileChange("docs/a.txt", "deleted", 0, 1),
        FileChange("fresh.txt", "added", 3, 0),
    ]
    assert await store.diff(after, before) == [
        FileChange("README.md", "modified", 1, 3),
        FileChange("data.bin", "modified", None, None),
        FileChange("docs/a.txt", "added", 1, 0),
        FileChange("fresh.txt", "deleted", 0, 3),
    ]
    with pytest.raises(CheckpointError, match="no checkpoint"):
        await store.diff(before, "0" * 40)
    with pytest.raises(CheckpointError, match="not a checkpoint id"):
        await store.diff(before, "--output=/tmp/x")


async def test_gitignore_is_honoured_and_a_newly_ignored_file_leaves_the_checkpoint(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"\x7fELF")
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    listed = store_git(store, "ls-tree", "-r", "--name-only", first).split()
    assert "debug.log" not in listed and "build/out.o" not in listed
    assert "README.md" in listed and ".gitignore" in listed
    (ws / ".gitignore").write_text("*.log\nbuild/\ndocs/\n")
    second = await store.snapshot()
    assert {c.path: c.status for c in await store.diff(first, second)} == {
        ".gitignore": "modified",
        "docs/a.txt": "deleted",
    }


async def test_files_over_the_size_limit_are_skipped_and_never_deleted_or_overwritten(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    (ws / "grows.txt").write_text("small\n")
    store = new_store(tmp_path, ws, max_file_bytes=1000)
    first = await store.snapshot()
    assert store.skipped == []
    big = b"x" * 1001
    (ws / "big.dat").write_bytes(big)
    (ws / "grows.txt").write_bytes(big)
    second = await store.snapshot()
    assert sorted(store.skipped) == ["big.dat", "grows.txt"]
    listed = store_git(store, "ls-tree", "-r", "--name-only", second).split()
    assert "big.dat" not in listed and "grows.txt" not in listed
    restored = await store.restore(first)
    assert (ws / "big.dat").read_bytes() == big
    assert (ws / "grows.txt").read_bytes() == big
    assert restored.changes == []


async def test_too_many_or_too_big_new_files_fail_with_the_limit_named(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    with pytest.raises(CheckpointError, match="max_new_files") as many:
        await new_store(tmp_path, ws, max_new_files=3).snapshot()
    assert ".gitignore" in str(many.value)
    with pytest.raises(CheckpointError, match="max_new_bytes"):
        await new_store(tmp_path, ws, "s2", max_new_bytes=100).snapshot()
    # Within the limits it works, and the counts are of new or changed files only.
    store = new_store(tmp_path, ws, "s3", max_new_files=100)
    first = await store.snapshot()
    (ws / "README.md").write_text("changed\n")
    limited = new_store(tmp_path, ws, "s3", max_new_files=1)
    assert await limited.snapshot() != first


async def test_a_file_turned_directory_and_back_is_restored(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    (ws / "README.md").unlink()
    (ws / "README.md").mkdir()
    (ws / "README.md" / "inside.txt").write_text("inside\n")
    (ws / "docs" / "a.txt").unlink()
    (ws / "docs").rmdir()
    (ws / "docs").write_text("now a file\n")
    second = await store.snapshot()
    expected = tree_state(ws)
    await store.restore(first)
    assert (ws / "README.md").read_text().startswith("# Project")
    assert (ws / "docs" / "a.txt").read_text() == "a\n"
    await store.restore(second)
    assert tree_state(ws) == expected


async def test_a_symlinked_directory_is_replaced_never_written_through(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("outside, keep\n")
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    # docs becomes a link to a folder outside the workspace: the checkpoint taken before
    # the restore holds the link, so the restore removes it and makes docs a folder again.
    (ws / "docs" / "a.txt").unlink()
    (ws / "docs").rmdir()
    os.symlink(outside, ws / "docs")
    await store.restore(first)
    assert not (ws / "docs").is_symlink()
    assert (ws / "docs" / "a.txt").read_text() == "a\n"
    assert (outside / "a.txt").read_text() == "outside, keep\n"


async def test_a_path_under_an_ignored_link_is_refused_before_anything_changes(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    (ws / "docs" / "a.txt").unlink()
    (ws / "docs").rmdir()
    os.symlink(outside, ws / "docs")
    (ws / ".gitignore").write_text("*.log\nbuild/\ndocs\n")
    (ws / "README.md").write_text("changed\n")
    with pytest.raises(CheckpointError, match="symbolic link") as refused:
        await store.restore(first)
    assert "docs/a.txt" in str(refused.value)
    assert list(outside.iterdir()) == []
    assert (ws / "README.md").read_text() == "changed\n"


FILES = 3000


def _exists(path: str) -> bool:
    return os.path.exists(path)


def _git_children(command: str = "") -> list[int]:
    """Pids of live git processes whose parent is this process (running `command`)."""
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            data = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue
        name = data[data.index(b"(") + 1 : data.rindex(b")")]
        fields = data[data.rindex(b")") + 2 :].split()
        if name != b"git" or int(fields[1]) != os.getpid() or fields[0] in (b"Z", b"X"):
            continue
        try:
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command.encode() in argv:
            found.append(int(entry.name))
    return found


def _many_files(ws: Path) -> None:
    ws.mkdir()
    for i in range(FILES):
        folder = ws / f"d{i % 30}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i}.txt").write_text(f"file {i}\n")


async def _hashing(task: asyncio.Task[str]) -> list[int]:
    """Wait until the snapshot's git hashes the files (the longest git run of a snapshot)."""
    deadline = time.monotonic() + 30
    while not (hashing := _git_children("update-index")):
        assert not task.done(), "the snapshot ended before git was seen hashing"
        assert time.monotonic() < deadline
        await asyncio.sleep(0.001)
    return hashing


async def test_an_abort_while_git_runs_kills_it_and_raises_abort_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _many_files(ws)
    store = new_store(tmp_path, ws)
    controller = AbortController()
    task = asyncio.create_task(store.snapshot(controller.signal))
    hashing = await _hashing(task)
    controller.abort("stop the snapshot")
    with pytest.raises(AbortError, match="stop the snapshot"):
        await asyncio.wait_for(task, 30)
    assert _git_children() == []
    assert not _exists(f"/proc/{hashing[0]}")
    # Usable afterwards (an index lock the killed git may have left is removed).
    commit = await store.snapshot()
    assert len(store_git(store, "ls-tree", "-r", "--name-only", commit).split()) == FILES


async def test_a_cancelled_snapshot_kills_git_and_leaves_the_store_usable(
    tmp_path: Path,
) -> None:
    # As a caller's time limit does (asyncio.wait_for): a cancellation, not an abort.
    ws = tmp_path / "ws"
    _many_files(ws)
    store = new_store(tmp_path, ws)
    task = asyncio.create_task(store.snapshot())
    hashing = await _hashing(task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _git_children() == []
    assert not _exists(f"/proc/{hashing[0]}")
    commit = await store.snapshot()
    assert len(store_git(store, "ls-tree", "-r", "--name-only", commit).split()) == FILES


async def test_git_locks_of_the_session_left_by_a_killed_git_are_removed(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    store_dir = tmp_path / "data" / "ws.git"
    (store_dir / "index-s1.lock").write_bytes(b"")
    (store_dir / "refs" / "ink" / "s1.lock").write_bytes(b"")
    # Another session's lock is not ours to judge.
    (store_dir / "index-other.lock").write_bytes(b"")
    (ws / "README.md").write_text("changed\n")
    assert await new_store(tmp_path, ws).snapshot() != first
    assert (store_dir / "index-other.lock").exists()


async def test_an_aborted_signal_stops_before_any_git(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    controller = AbortController()
    controller.abort("already")
    store = new_store(tmp_path, ws)
    with pytest.raises(AbortError):
        await store.snapshot(controller.signal)
    assert not (tmp_path / "data" / "ws.git" / "index-s1").exists()


async def test_clear_errors_for_a_missing_git_and_an_unusable_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    (tmp_path / "not-a-dir").write_text("")
    blocked = CheckpointStore(ws, tmp_path / "not-a-dir" / "ws.git", session_id="s")
    with pytest.raises(CheckpointError, match="cannot be created"):
        await blocked.snapshot()
    with pytest.raises(CheckpointError, match="inside the workspace"):
        await CheckpointStore(ws, ws / "store.git", session_id="s").snapshot()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(CheckpointError, match="git command"):
        await new_store(tmp_path, ws).snapshot()


def test_session_ids_must_make_a_safe_ref_and_file_name(tmp_path: Path) -> None:
    for bad in ("", "../x", "a/b", "a.lock", "a b", "x" * 65):
        with pytest.raises(ValueError):
            CheckpointStore(tmp_path, tmp_path / "s.git", session_id=bad)


async def test_another_process_on_the_same_session_is_told_to_wait(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    held = os.open(tmp_path / "data" / "ws.git" / "ink-locks" / "s1", os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(CheckpointError, match="Another ink process"):
            await new_store(tmp_path, ws).snapshot()
        # Other sessions are not held up.
        assert len(await new_store(tmp_path, ws, "s2").snapshot()) == 40
    finally:
        os.close(held)
    assert await new_store(tmp_path, ws).snapshot() == first


async def test_restoring_an_unknown_checkpoint_changes_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    (ws / "README.md").write_text("changed\n")
    with pytest.raises(CheckpointError, match="no checkpoint"):
        await store.restore("f" * 40)
    assert (ws / "README.md").read_text() == "changed\n"
    assert store_git(store, "rev-parse", "refs/ink/s1").strip() == first


async def test_an_ignored_file_where_a_folder_was_is_left_and_the_rest_restored(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    make_project(ws, as_repo=False)
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    (ws / "docs" / "a.txt").unlink()
    (ws / "docs").rmdir()
    (ws / ".gitignore").write_text("*.log\nbuild/\ndocs\n")
    (ws / "docs").write_text("an ignored file named like the old folder\n")
    restored = await store.restore(first)
    assert (ws / "docs").read_text() == "an ignored file named like the old folder\n"
    assert (ws / ".gitignore").read_text() == "*.log\nbuild/\n"
    assert [c.path for c in restored.changes] == [".gitignore"]


async def test_odd_file_names_round_trip(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    names = [
        "with space.txt",
        "new\nline.txt",
        "tab\there.txt",
        "ünï.txt",
        os.fsdecode(b"l\xe9gacy"),
    ]
    for name in names:
        (ws / name).write_text(f"{name!r}\n")
    store = new_store(tmp_path, ws)
    first = await store.snapshot()
    for name in names:
        (ws / name).unlink()
    second = await store.snapshot()
    assert sorted(c.path for c in await store.diff(first, second)) == sorted(names)
    await store.restore(first)
    assert sorted(os.listdir(ws)) == sorted(names)
    assert all((ws / name).read_text() == f"{name!r}\n" for name in names)
