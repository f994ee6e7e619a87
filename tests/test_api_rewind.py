"""Going back through the Python API (`AgentSession`): a sub-agent's changes are part of
its parent's checkpoints, a workspace that is not a git repository works the same, the
picker's list names the files each run changed, moving between branches, a session
with checkpoints off restores only the conversation, and one not recorded has no tree."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession
from ink_tui.session.rewind import RewindRefused
from tests.run_helpers import user_texts
from tests.scripted_server import Reply, ScriptedServer, text_reply, tool_reply


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL", "INK_CHECKPOINTS"):
        monkeypatch.delenv(name, raising=False)
    return home


def opened(server: ScriptedServer, workspace: Path, **settings: Any) -> Any:
    return AgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="k", **settings
    )


@pytest.fixture
async def session(
    server: ScriptedServer, workspace: Path, store: Path
) -> AsyncIterator[AgentSession]:
    async with opened(server, workspace) as session:
        yield session


def entry_of(session_messages: list[Any], text: str) -> str:
    return next(str(m["entry_id"]) for m in session_messages if m.get("content") == text)


async def test_a_sub_agents_changes_go_back_with_its_parents_message(
    session: AgentSession, server: ScriptedServer, workspace: Path
) -> None:
    prompt = "Write the notes file."

    def sub_agent(body: dict[str, Any]) -> Reply | None:
        texts = user_texts(body)
        if texts[:1] != [prompt]:
            return None
        if any(m["role"] == "tool" for m in body["messages"]):
            return text_reply("Wrote it.")
        return tool_reply([("bash", {"command": "mkdir -p notes && echo n > notes/n.txt"})])

    server.responders.append(sub_agent)
    server.push(
        tool_reply([("task", {"description": "notes", "prompt": prompt}, "call_task")]),
        text_reply("Done."),
    )
    await session.prompt("delegate it")
    assert (workspace / "notes" / "n.txt").exists()
    entry = entry_of(session.messages, "delegate it")
    preview = await session.rewind_preview(entry)
    assert [(f["path"], f["status"]) for f in preview["files"]] == [("notes/n.txt", "deleted")]
    done = await session.rewind(entry, "files")
    assert done == {"text": "delegate it", "restored_files": ["notes/n.txt"]}
    assert not (workspace / "notes").exists()


async def test_the_picker_lists_each_message_with_the_files_its_run_changed(
    session: AgentSession, server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("write", {"path": "a.txt", "content": "a\n"})]),
        text_reply("A."),
        text_reply("Nothing changed."),
        tool_reply(
            [
                (
                    "edit",
                    {
                        "path": "sum.py",
                        "edits": [{"old_text": "sum(xs)", "new_text": "sum(xs) + 0"}],
                    },
                )
            ]
        ),
        text_reply("B."),
    )
    await session.prompt("make a")
    await session.prompt("just talk")
    await session.prompt("edit sum")
    turns = await session.user_messages()
    assert [(t["text"], t["changed_files"]) for t in turns] == [
        ("make a", ["a.txt"]),
        ("just talk", []),
        ("edit sum", ["sum.py"]),
    ]
    assert all(t["time"] for t in turns)
    assert [t["has_checkpoint"] for t in turns] == [True, False, True]


async def test_navigate_tree_moves_between_branches(
    session: AgentSession, server: ScriptedServer
) -> None:
    server.push(text_reply("One."), text_reply("Two."), text_reply("Three."))
    await session.prompt("one")
    await session.prompt("two")
    two = entry_of(session.messages, "two")
    old_tip = (await session.tree())["leaf_id"]
    await session.rewind(two, "conversation")
    await session.prompt("three")
    assert [m["content"] for m in session.messages if m["role"] == "user"] == ["one", "three"]
    moved = await session.navigate_tree(old_tip)
    assert moved == {"text": "", "leaf_id": old_tip}
    assert [m["content"] for m in session.messages if m["role"] == "user"] == ["one", "two"]
    moved = await session.navigate_tree(two)
    assert moved["text"] == "two"
    assert [m["content"] for m in session.messages if m["role"] == "user"] == ["one"]


async def test_with_checkpoints_off_files_stay_and_only_the_conversation_goes_back(
    server: ScriptedServer, workspace: Path, store: Path
) -> None:
    async with opened(server, workspace, checkpoints="off") as session:
        server.push(tool_reply([("bash", {"command": "echo x > x.txt"})]), text_reply("X."))
        await session.prompt("make x")
        entry = entry_of(session.messages, "make x")
        tree = await session.tree()
        assert not any(n["role"] == "checkpoint" for n in tree["tree"])
        done = await session.rewind(entry, "both")
        assert done["restored_files"] == [] and (workspace / "x.txt").exists()
        assert session.messages == []


async def test_a_session_that_is_not_recorded_has_no_tree(
    server: ScriptedServer, workspace: Path, store: Path
) -> None:
    async with opened(server, workspace, record=False) as session:
        with pytest.raises(RewindRefused, match="not recorded"):
            await session.tree()


def test_the_sync_session_goes_back_too(
    server: ScriptedServer, workspace: Path, store: Path
) -> None:
    from ink_tui import SyncAgentSession

    with SyncAgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="k"
    ) as session:
        server.push(tool_reply([("bash", {"command": "echo s > s.txt"})]), text_reply("S."))
        session.prompt("make s")
        [turn] = session.user_messages()
        assert turn["changed_files"] == ["s.txt"]
        assert session.rewind(turn["entry_id"], "both") == {
            "text": "make s",
            "restored_files": ["s.txt"],
        }
        assert not (workspace / "s.txt").exists() and session.messages == []
        assert session.undo_rewind() == {"restored_files": ["s.txt"]}
        assert session.tree()["leaf_id"] is None
