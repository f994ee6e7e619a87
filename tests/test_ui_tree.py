"""/tree and /fork in the running app (Pilot, loopback server, a real recorded session):
the tree shows both branches under the answer they split from, Enter moves to the old
branch and back (transcript, history and editor follow), and /fork opens a new session
holding the branch before the chosen message, the old one left as it was."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from ink_tui.session.catalog import list_sessions
from ink_tui.session.session_reader import load_session
from ink_tui.ui.app import InkApp
from ink_tui.ui.screens.rewind_picker import RewindPicker
from ink_tui.ui.screens.tree_view import TreeView, tree_rows
from ink_tui.ui.startup import SessionPlan
from tests.run_helpers import user_texts
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.test_ui_rewind import (
    SIZE,
    confirm,
    picker,
    recorded_users,
    settled,
    shown,
    two_turns,
    users,
)
from tests.ui_helpers import make_app, wait_until


async def branched(pilot: Pilot, app: InkApp, server: ScriptedServer) -> None:
    """Two turns, a rewind of the conversation to before the second, another second."""
    await two_turns(pilot, app, server)
    app.commands.run("rewind")
    await picker(pilot, app)
    await pilot.press("enter")  # the newest: "change things"
    await confirm(pilot, app)
    await pilot.press("2")  # the conversation only
    await wait_until(pilot, lambda: "Restored the conversation" in shown(app))
    await pilot.press("ctrl+c")  # its text out of the editor
    server.push(text_reply("Other way."))
    await settled(pilot, app, "try another way")


async def tree_view(pilot: Pilot, app: InkApp) -> TreeView:
    app.commands.run("tree")
    await wait_until(pilot, lambda: isinstance(app.screen, TreeView), what="the tree")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, TreeView)
    return screen


async def test_tree_moves_to_the_old_branch_and_back(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=tmp_path / "d")
    async with app.run_test(size=SIZE) as pilot:
        await branched(pilot, app, server)
        screen = await tree_view(pilot, app)
        labels = [label for _, label, _ in screen.visible_rows]
        assert labels == [
            "● look first",
            "  ○ change things",
            "  ○ ↳ answer: Changed.",
            "  ● try another way",
            "  ● ↳ answer: Other way.",
        ]
        here = [row for row in screen.visible_rows if row[2].startswith("here")]
        assert [row[1] for row in here] == ["  ● ↳ answer: Other way."]
        assert screen.highlighted_key == here[0][0]

        # To the end of the old branch: its conversation, nothing in the editor.
        await pilot.press(*"changed", "enter")
        await wait_until(pilot, lambda: "Moved to the end of that branch" in shown(app))
        assert users(app) == ["look first", "change things"]
        view = shown(app)
        assert "Changed." in view and "Other way." not in view
        assert app.prompt.text == ""
        server.push(text_reply("Went on."))
        await settled(pilot, app, "go on here")
        assert user_texts(server.requests[-1]) == ["look first", "change things", "go on here"]

        # Back to before "try another way": its text into the editor.
        screen = await tree_view(pilot, app)
        assert "  ● ↳ answer: Went on." in [label for _, label, _ in screen.visible_rows]
        await pilot.press(*"another", "enter")
        await wait_until(pilot, lambda: "Moved to before “try another way”" in shown(app))
        assert users(app) == ["look first"]
        assert app.prompt.text == "try another way"
        view = shown(app)
        assert "Looked." in view and "Changed." not in view and "Other way." not in view


async def test_tree_rows_of_a_session_never_rewound_are_flat(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "d"
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
    [summary] = list_sessions(workspace, root)
    rows = tree_rows(load_session(summary.path).tree)
    assert [(row.depth, row.text, row.on_branch, row.here) for row in rows] == [
        (0, "look first", True, False),
        (0, "change things", True, False),
        (0, "↳ answer: Changed.", True, True),
    ]


async def test_fork_opens_a_new_session_with_the_branch_before_the_message(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "d"
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        assert app.binding is not None and app.binding.writer is not None
        old_id, old_path = app.binding.writer.id, app.binding.writer.path
        app.commands.run("fork")
        screen = await picker(pilot, app)
        assert screen.visible_rows[0][1].endswith("change things")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Forked into the new session" in shown(app))
        new_id = app.binding.writer.id
        assert new_id != old_id and new_id in shown(app)
        assert users(app) == ["look first"]
        assert app.prompt.text == "change things"
        view = shown(app)
        assert "Looked." in view and "Changed." not in view
        # The files are left as they are: a fork starts from the conversation.
        assert (workspace / "created.txt").read_text() == "made"
        await pilot.press("ctrl+c")
        server.push(tool_reply([("read", {"path": "README.md"})]), text_reply("Forked on."))
        await settled(pilot, app, "in the fork")
        assert user_texts(server.requests[-1]) == ["look first", "in the fork"]
    assert recorded_users(old_path) == ["look first", "change things"]
    forked = next(s for s in list_sessions(workspace, root) if s.id == new_id)
    assert recorded_users(forked.path) == ["look first", "in the fork"]


async def test_fork_picker_cancel_changes_nothing(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "d"
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        server.push(text_reply("Hi."))
        await settled(pilot, app, "hello")
        app.commands.run("fork")
        await picker(pilot, app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, RewindPicker))
        await pilot.pause(0.1)
        assert users(app) == ["hello"]
    assert len(list_sessions(workspace, root)) == 1
