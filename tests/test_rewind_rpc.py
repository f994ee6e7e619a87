"""Rewind through the real `ink --mode rpc` process, in a workspace that is the user's
own git repository: a write and a command change files, a rewind with files puts them
back (what the command created is gone, what the write changed is back), the next
request lacks the rewound message and keeps the earlier ones, `get_tree` shows the two
branches under one parent, the file rewind can be undone, and the user's repository
(HEAD, index, branches, stash) is exactly as it was. A rewind while running is refused."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.rpc_client import RpcClient, RpcError
from tests.rpc_process import isolated_env, spawn_rpc
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply

ORIGINAL_SUM = "def total(xs):\n    return sum(xs)\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, env=_git_env()
    )
    return done.stdout


def _git_env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="u",
        GIT_AUTHOR_EMAIL="u@example.com",
        GIT_COMMITTER_NAME="u",
        GIT_COMMITTER_EMAIL="u@example.com",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def make_user_repo(workspace: Path) -> None:
    """A repository with history, a branch, a stash and a staged change."""
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "README.md", "sum.py")
    git(workspace, "commit", "-q", "-m", "first")
    git(workspace, "branch", "feature")
    (workspace / "README.md").write_text("# Sample\n\nstashed edit\n")
    git(workspace, "stash", "-q")
    (workspace / "staged.txt").write_text("staged\n")
    git(workspace, "add", "staged.txt")


def repo_state(workspace: Path) -> dict[str, str]:
    return {
        "head": git(workspace, "rev-parse", "HEAD"),
        "index": git(workspace, "ls-files", "--stage"),
        "refs": git(workspace, "for-each-ref"),
        "stash": git(workspace, "stash", "list"),
        "symbolic_head": git(workspace, "symbolic-ref", "HEAD"),
    }


@pytest.fixture
async def ink(server: ScriptedServer, workspace: Path, tmp_path: Path) -> AsyncIterator[RpcClient]:
    make_user_repo(workspace)
    async with spawn_rpc(server, workspace, isolated_env(tmp_path)) as client:
        yield client


async def prompt_settled(ink: RpcClient, text: str) -> None:
    await ink.command("prompt", message=text)
    settled = await ink.wait_settled()
    assert settled["stop_reason"] == "completed", settled


def user_entry(ink: RpcClient, text: str) -> str:
    for event in ink.seen:
        if event["type"] == "user_message" and event["text"] == text:
            return str(event["entry_id"])
    raise AssertionError(f"no user_message {text!r}")


async def test_rewind_files_and_conversation_then_undo(
    ink: RpcClient, server: ScriptedServer, workspace: Path
) -> None:
    before = repo_state(workspace)
    server.push(text_reply("Looked."))
    await prompt_settled(ink, "look first")
    server.push(
        tool_reply([("write", {"path": "sum.py", "content": "def total(xs):\n    return 0\n"})]),
        tool_reply(
            [("bash", {"command": "printf made > created.txt && mkdir -p d/e && touch d/e/f"})]
        ),
        text_reply("Changed."),
    )
    await prompt_settled(ink, "change things")
    assert (workspace / "created.txt").read_text() == "made"
    assert "return 0" in (workspace / "sum.py").read_text()
    change_id = user_entry(ink, "change things")

    preview = await ink.command("rewind_preview", entry_id=change_id)
    changes = {f["path"]: f["status"] for f in preview["files"]}
    assert changes["sum.py"] == "modified"
    assert changes["created.txt"] == "deleted"
    assert "staged.txt" not in changes  # the same before and after

    done = await ink.command("rewind", entry_id=change_id, restore="both")
    assert done["text"] == "change things"
    assert {"sum.py", "created.txt"} <= set(done["restored_files"])
    assert not (workspace / "created.txt").exists()
    assert not (workspace / "d").exists()
    assert (workspace / "sum.py").read_text() == ORIGINAL_SUM
    rewound = await ink.wait_for(lambda e: e["type"] == "rewound")
    assert rewound["restore"] == "both" and rewound["entry_id"] == change_id

    messages = (await ink.command("get_messages"))["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["look first"]

    server.push(text_reply("Other way."))
    await prompt_settled(ink, "try another way")
    assert user_texts(server.requests[-1]) == ["look first", "try another way"]

    tree = await ink.command("get_tree")
    users = {n["text"]: n for n in tree["tree"] if n["role"] == "user"}
    old, new = users["change things"], users["try another way"]
    assert old["parent_id"] == new["parent_id"] is not None
    parent = next(n for n in tree["tree"] if n["id"] == old["parent_id"])
    assert parent["role"] == "assistant" and parent["text"] == "Looked."
    assert new["on_branch"] and not old["on_branch"]
    assert any(n["role"] == "checkpoint" for n in tree["tree"])

    undone = await ink.command("undo_rewind")
    assert {"sum.py", "created.txt"} <= set(undone["restored_files"])
    assert (workspace / "created.txt").read_text() == "made"
    assert "return 0" in (workspace / "sum.py").read_text()
    assert (workspace / "d" / "e" / "f").exists()

    assert repo_state(workspace) == before
    assert (workspace / "staged.txt").read_text() == "staged\n"


async def test_files_only_keeps_the_conversation_and_conversation_only_keeps_files(
    ink: RpcClient, server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("bash", {"command": "echo one > one.txt"})]),
        text_reply("Made one."),
    )
    await prompt_settled(ink, "make one")
    entry = user_entry(ink, "make one")
    kept = await ink.command("rewind", entry_id=entry, restore="conversation")
    assert kept["restored_files"] == [] and (workspace / "one.txt").exists()
    assert (await ink.command("get_messages"))["messages"] == []

    server.push(
        tool_reply([("bash", {"command": "echo two > two.txt"})]),
        text_reply("Made two."),
    )
    await prompt_settled(ink, "make two")
    entry = user_entry(ink, "make two")
    done = await ink.command("rewind", entry_id=entry, restore="files")
    assert done["restored_files"] == ["two.txt"] and not (workspace / "two.txt").exists()
    users = [
        m["content"] for m in (await ink.command("get_messages"))["messages"] if m["role"] == "user"
    ]
    assert users == ["make two"]


async def test_a_rewind_while_running_is_refused_and_changes_nothing(
    ink: RpcClient, server: ScriptedServer, workspace: Path
) -> None:
    server.push(text_reply("First."))
    await prompt_settled(ink, "first")
    entry = user_entry(ink, "first")
    gate = Gate()
    server.push(text_reply("Held answer", gate=gate))
    await ink.command("prompt", message="second")
    await wait_gate(gate)
    with pytest.raises(RpcError, match="in progress"):
        await ink.command("rewind", entry_id=entry, restore="both")
    with pytest.raises(RpcError, match="in progress"):
        await ink.command("undo_rewind")
    gate.open()
    await ink.wait_settled()
    users = [
        m["content"] for m in (await ink.command("get_messages"))["messages"] if m["role"] == "user"
    ]
    assert users == ["first", "second"]


async def test_bad_entry_ids_get_clear_errors(ink: RpcClient, server: ScriptedServer) -> None:
    server.push(text_reply("Hi."))
    await prompt_settled(ink, "hello")
    with pytest.raises(RpcError, match="no entry 'nope'"):
        await ink.command("rewind", entry_id="nope", restore="both")
    with pytest.raises(RpcError, match="entry_id"):
        await ink.command("rewind", entry_id=3, restore="both")
    with pytest.raises(RpcError, match="restore"):
        await ink.command("rewind", entry_id=user_entry(ink, "hello"), restore="all")
    tree: dict[str, Any] = await ink.command("get_tree")
    assistant = next(n for n in tree["tree"] if n["role"] == "assistant")
    with pytest.raises(RpcError, match="not one of the user's messages"):
        await ink.command("rewind", entry_id=assistant["id"], restore="conversation")
    with pytest.raises(RpcError, match="no file restore to undo"):
        await ink.command("undo_rewind")


async def test_fork_starts_a_new_session_from_before_the_message(
    ink: RpcClient, server: ScriptedServer
) -> None:
    server.push(text_reply("A."), text_reply("B."))
    await prompt_settled(ink, "alpha")
    await prompt_settled(ink, "beta")
    old_state = await ink.command("get_state")
    forked = await ink.command("fork", entry_id=user_entry(ink, "beta"))
    assert forked["text"] == "beta" and forked["session_id"] != old_state["session_id"]
    state = await ink.command("get_state")
    assert state["session_id"] == forked["session_id"]
    users = [
        m["content"] for m in (await ink.command("get_messages"))["messages"] if m["role"] == "user"
    ]
    assert users == ["alpha"]
    server.push(text_reply("C."))
    await prompt_settled(ink, "gamma")
    assert user_texts(server.requests[-1]) == ["alpha", "gamma"]
    # The old session is as it was.
    back = await ink.command("switch_session", session_id=old_state["session_id"])
    assert back["message_count"] == 4
