"""The checkpoint store never runs what a repository, a user's config or the environment
asks git to run, and never changes the user's own repository. Real git, real repos."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from ink_tui.checkpoints import CheckpointStore
from ink_tui.checkpoints.git_command import ISOLATION_CONFIG, isolated_env
from ink_tui.session.store_paths import workspace_slug
from tests.test_checkpoint_store import git_in, store_git, tree_state

HOOKS = (
    "pre-commit",
    "post-commit",
    "commit-msg",
    "post-index-change",
    "reference-transaction",
    "post-checkout",
    "pre-auto-gc",
    "post-rewrite",
)


def hostile_script(tmp_path: Path, marker: Path) -> Path:
    script = tmp_path / "hostile.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat >/dev/null\n')
    script.chmod(0o755)
    return script


def hostile_config(script: Path, hooks: Path) -> str:
    return (
        f"[core]\n\tfsmonitor = {script}\n\thooksPath = {hooks}\n"
        f"\tattributesFile = {hooks}/attributes\n\tpager = {script}\n"
        f'[filter "evil"]\n\tclean = {script}\n\tsmudge = {script}\n'
        f'[diff "evil"]\n\ttextconv = {script}\n\tcommand = {script}\n'
        f"[diff]\n\texternal = {script}\n"
        f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {script}\n"
        f"[gc]\n\tauto = 1\n[maintenance]\n\tauto = true\n"
        f"[include]\n\tpath = {hooks}/included\n"
    )


def make_hooks(tmp_path: Path, script: Path) -> Path:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in HOOKS:
        os.symlink(script, hooks / name)
    (hooks / "attributes").write_text("* filter=evil diff=evil\n")
    (hooks / "included").write_text(f"[core]\n\tfsmonitor = {script}\n")
    return hooks


async def test_a_hostile_repository_config_and_environment_run_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    script = hostile_script(tmp_path, marker)
    hooks = make_hooks(tmp_path, script)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "plain.txt").write_text("plain\n")
    git_in(ws, "init", "-q", "-b", "main")
    git_in(ws, "add", "-A")
    git_in(ws, "commit", "-q", "-m", "first")
    # A cloned repository's config and attributes: untrusted.
    config = ws / ".git" / "config"
    config.write_text(config.read_text() + hostile_config(script, hooks))
    for name in HOOKS:
        os.symlink(script, ws / ".git" / "hooks" / name)
    (ws / ".gitattributes").write_text("* filter=evil diff=evil text eol=crlf ident\n")
    exact = b"line one\nid $Id$\nno newline at the end"
    (ws / "exact.txt").write_bytes(exact)
    # The user's own environment and global config, hostile too.
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(hostile_config(script, hooks))
    (home / ".config" / "git" / "config").write_text(hostile_config(script, hooks))
    (home / ".config" / "git" / "attributes").write_text("* filter=evil diff=evil\n")
    trace = tmp_path / "trace"
    for name, value in {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_DIR": str(ws / ".git"),
        "GIT_WORK_TREE": str(ws),
        "GIT_INDEX_FILE": str(ws / ".git" / "index"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_CONFIG_SYSTEM": str(home / ".gitconfig"),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{script}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.hooksPath",
        "GIT_CONFIG_VALUE_0": str(hooks),
        "GIT_EXTERNAL_DIFF": str(script),
        "GIT_TRACE": str(trace),
        "GIT_OBJECT_DIRECTORY": str(ws / ".git" / "objects"),
    }.items():
        monkeypatch.setenv(name, value)
    environ = dict(os.environ)
    user_git = _digest(ws / ".git")

    store = CheckpointStore(ws, tmp_path / "store.git", session_id="s1")
    first = await store.snapshot()
    (ws / "plain.txt").write_text("changed\n")
    (ws / "added.txt").write_text("added\n")
    second = await store.snapshot()
    assert {c.path for c in await store.diff(first, second)} == {"plain.txt", "added.txt"}
    (ws / "exact.txt").write_bytes(b"overwritten\r\n")
    restored = await store.restore(first)
    assert (ws / "exact.txt").read_bytes() == exact
    assert store_git(store, "cat-file", "blob", f"{first}:exact.txt").encode() == exact
    await store.restore(restored.before)

    assert not marker.exists(), marker.read_text()
    assert not trace.exists()
    assert os.environ == environ
    assert _digest(ws / ".git") == user_git
    # The control: plain git in the same environment does run them.
    _plain_git(ws, "status")
    assert marker.exists() and trace.exists()


def _plain_git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=ws, stdin=subprocess.DEVNULL, capture_output=True, timeout=30
    )


def _digest(folder: Path) -> dict[str, str]:
    """Every file under `folder` (links as their target) with a hash of its content."""
    found: dict[str, str] = {}
    for parent, _, files in os.walk(folder):
        for name in files:
            path = Path(parent, name)
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            found[path.relative_to(folder).as_posix()] = hashlib.sha256(data).hexdigest()
    return found


def _user_view(ws: Path) -> dict[str, str]:
    return {
        "head": git_in(ws, "rev-parse", "HEAD"),
        "symbolic": git_in(ws, "symbolic-ref", "HEAD"),
        "index": "\n".join(
            line[:1] + line[2:]
            for line in git_in(ws, "status", "--porcelain").splitlines()
            if line[:1] not in (" ", "?")
        ),
        "branches": git_in(ws, "branch", "-a", "-v"),
        "stash": git_in(ws, "stash", "list"),
        "refs": git_in(ws, "for-each-ref"),
        "staged": git_in(ws, "diff", "--cached"),
    }


async def test_the_users_repository_is_untouched_by_snapshot_and_restore(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a1\n")
    (ws / "b.txt").write_text("b1\n")
    git_in(ws, "init", "-q", "-b", "main")
    git_in(ws, "add", "-A")
    git_in(ws, "commit", "-q", "-m", "one")
    git_in(ws, "branch", "feature")
    (ws / "a.txt").write_text("a2\n")
    git_in(ws, "commit", "-q", "-am", "two")
    (ws / "b.txt").write_text("stashed\n")
    git_in(ws, "stash", "-q")
    (ws / "a.txt").write_text("a3 staged\n")
    git_in(ws, "add", "a.txt")
    (ws / "b.txt").write_text("b unstaged\n")
    (ws / "untracked.txt").write_text("untracked\n")
    view = _user_view(ws)
    user_git = _digest(ws / ".git")

    store = CheckpointStore(ws, tmp_path / "store.git", session_id="s1")
    first = await store.snapshot()
    listed = store_git(store, "ls-tree", "-r", "--name-only", first).split()
    assert sorted(listed) == ["a.txt", "b.txt", "untracked.txt"]
    at_first = tree_state(ws)
    (ws / "a.txt").write_text("agent edit\n")
    (ws / "b.txt").unlink()
    (ws / "created.txt").write_text("created\n")
    changed = tree_state(ws)
    await store.snapshot()
    restored = await store.restore(first)
    assert tree_state(ws) == at_first
    assert _digest(ws / ".git") == user_git
    assert _user_view(ws) == view
    await store.restore(restored.before)
    assert tree_state(ws) == changed
    assert _digest(ws / ".git") == user_git


async def test_a_workspace_inside_a_repository_leaves_that_repository_alone(
    tmp_path: Path,
) -> None:
    outer = tmp_path / "outer"
    (outer / "ws").mkdir(parents=True)
    (outer / "top.txt").write_text("top\n")
    (outer / "ws" / "inner.txt").write_text("inner\n")
    git_in(outer, "init", "-q", "-b", "main")
    git_in(outer, "add", "-A")
    git_in(outer, "commit", "-q", "-m", "outer")
    outer_git = _digest(outer / ".git")
    ws = outer / "ws"
    store = CheckpointStore(ws, tmp_path / "store.git", session_id="s1")
    first = await store.snapshot()
    assert store_git(store, "ls-tree", "-r", "--name-only", first).split() == ["inner.txt"]
    (ws / "inner.txt").write_text("changed\n")
    await store.restore(first)
    assert (ws / "inner.txt").read_text() == "inner\n"
    assert _digest(outer / ".git") == outer_git


async def test_a_nested_repository_is_left_out_and_left_alone(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "vendor" / "lib").mkdir(parents=True)
    (ws / "main.txt").write_text("main\n")
    (ws / "vendor" / "lib" / "code.txt").write_text("lib\n")
    git_in(ws / "vendor" / "lib", "init", "-q")
    store = CheckpointStore(ws, tmp_path / "store.git", session_id="s1")
    first = await store.snapshot()
    assert store_git(store, "ls-tree", "-r", "--name-only", first).split() == ["main.txt"]
    (ws / "vendor" / "lib" / "code.txt").write_text("changed\n")
    restored = await store.restore(first)
    assert restored.changes == []
    assert (ws / "vendor" / "lib" / "code.txt").read_text() == "changed\n"


def test_git_runs_with_our_environment_only_and_every_isolation_option(tmp_path: Path) -> None:
    base = {"PATH": "/usr/bin", "GIT_DIR": "/elsewhere", "GIT_TRACE": "1", "LANG": "fr_FR"}
    env = isolated_env(tmp_path / "s.git", tmp_path / "ws", tmp_path / "s.git" / "index-a", base)
    assert env["GIT_DIR"] == str(tmp_path / "s.git")
    assert env["GIT_WORK_TREE"] == str(tmp_path / "ws")
    assert env["GIT_INDEX_FILE"] == str(tmp_path / "s.git" / "index-a")
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_AUTHOR_NAME"] == env["GIT_COMMITTER_NAME"] == "ink"
    assert env["GIT_AUTHOR_EMAIL"] == env["GIT_COMMITTER_EMAIL"] == "ink@localhost"
    assert "GIT_TRACE" not in env and env["PATH"] == "/usr/bin"
    # Gits older than 2.32 ignore GIT_CONFIG_GLOBAL and look in HOME: nothing there.
    assert env["HOME"] == env["XDG_CONFIG_HOME"] == str(tmp_path / "s.git")
    store = CheckpointStore(tmp_path, tmp_path.parent / "x.git", session_id="abc")
    argv = store._git.argv(["status"])
    for option in (
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "gc.auto=0",
        "core.autocrlf=false",
        "core.quotepath=off",
    ):
        assert option in ISOLATION_CONFIG
        assert argv[argv.index(option) - 1] == "-c"
    assert argv[-1] == "status"


def test_the_store_lives_in_the_data_root_by_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = CheckpointStore.for_workspace(ws, session_id="abc", root=tmp_path / "data")
    expected = tmp_path / "data" / "checkpoints" / (workspace_slug(ws) + ".git")
    assert store.store_dir == expected
    assert store._git.index_file == expected / "index-abc"
