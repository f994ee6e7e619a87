"""Rewind in the running app (Pilot, loopback server, a real recorded session, real files
and real git checkpoints): Esc Esc and /rewind open the picker only when idle with an
empty input; restoring code and conversation undoes what a write and a command did,
puts the message back into the editor and redraws the branch only; conversation-only
keeps the files; cancel changes nothing; a rewind is refused while a run works."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from ink_tui.core.messages import UserMessage
from ink_tui.session.catalog import list_sessions
from ink_tui.session.entries import UserEntry
from ink_tui.session.session_reader import load_session
from ink_tui.ui.app import InkApp
from ink_tui.ui.screens.rewind_confirm import RewindConfirm
from ink_tui.ui.screens.rewind_picker import UNDO_KEY, RewindPicker
from ink_tui.ui.startup import SessionPlan
from ink_tui.ui.widgets.hint_row import HintRow
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)
ORIGINAL_SUM = "def total(xs):\n    return sum(xs)\n"


def users(app: InkApp) -> list[str]:
    assert app.controller is not None
    return [m.content for m in app.controller.history if isinstance(m, UserMessage)]


def recorded_users(path: Path) -> list[str]:
    """The user's messages on the file's current branch."""
    tree = load_session(path).tree
    return [n.entry.message.content for n in tree.user_messages() if isinstance(n.entry, UserEntry)]


def shown(app: InkApp) -> str:
    return app.query_one(Transcript).plain_text()


async def send(pilot: Pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def settled(pilot: Pilot, app: InkApp, text: str) -> None:
    await send(pilot, text)
    await wait_until(pilot, lambda: app.controller is not None and app.controller.state == "idle")
    assert app.controller is not None
    await app.controller.wait_idle()


def recorded_app(server: ScriptedServer, workspace: Path, tmp_path: Path) -> tuple[InkApp, Path]:
    root = tmp_path / "data"
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    wide_double_escape(app)
    return app, root


def wide_double_escape(app: InkApp) -> None:
    """Two Escapes count as a double press however slow the machine is between them,
    and the first one's hint stays until it is looked at."""
    app.commands.rewind.double_escape_s = 60.0
    app.commands.rewind.hint_s = 60.0


async def two_turns(pilot: Pilot, app: InkApp, server: ScriptedServer) -> None:
    """'look first' (no change), then 'change things': a write and a command."""
    server.push(text_reply("Looked."))
    await settled(pilot, app, "look first")
    await drawn(pilot, app, "Looked.")
    server.push(
        tool_reply([("write", {"path": "sum.py", "content": "def total(xs):\n    return 0\n"})]),
        tool_reply([("bash", {"command": "printf made > created.txt && printf x >> sum.py"})]),
        text_reply("Changed."),
    )
    await settled(pilot, app, "change things")
    await drawn(pilot, app, "Changed.")


async def drawn(pilot: Pilot, app: InkApp, answer: str) -> None:
    """An answer's last words are drawn at the transcript's next frame, after idle."""
    await wait_until(pilot, lambda: answer in shown(app), what=answer)


async def picker(pilot: Pilot, app: InkApp) -> RewindPicker:
    await wait_until(pilot, lambda: isinstance(app.screen, RewindPicker), what="the picker")
    screen = app.screen
    assert isinstance(screen, RewindPicker)
    await pilot.pause()
    return screen


async def confirm(pilot: Pilot, app: InkApp) -> RewindConfirm:
    await wait_until(pilot, lambda: isinstance(app.screen, RewindConfirm), what="the confirm")
    screen = app.screen
    assert isinstance(screen, RewindConfirm)
    await pilot.pause()
    return screen


async def test_esc_esc_rewinds_code_and_conversation(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, root = recorded_app(server, workspace, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        assert (workspace / "created.txt").read_text() == "made"
        assert "Changed." in shown(app)

        await pilot.press("escape")
        await pilot.pause()
        assert "Esc again to rewind" in str(app.query_one(HintRow).render())
        await pilot.press("escape")
        screen = await picker(pilot, app)
        rows = screen.visible_rows
        assert [row[1].split("  ", 1)[1] for row in rows] == ["change things", "look first"]
        assert rows[0][2] == "2 files changed" and rows[1][2] == ""
        assert screen.highlighted_key == rows[0][0]  # the newest

        await pilot.press("enter")
        box = await confirm(pilot, app)
        assert box.choices == ["both", "conversation", "files"]
        changes = {change.path: change.status for change in box.preview.changes}
        assert changes == {"sum.py": "modified", "created.txt": "deleted"}

        await pilot.press("1")
        await wait_until(pilot, lambda: "Restored 2 files" in shown(app), what="the notice")
        assert not (workspace / "created.txt").exists()
        assert (workspace / "sum.py").read_text() == ORIGINAL_SUM
        assert app.prompt.text == "change things"
        view = shown(app)
        assert "look first" in view and "Looked." in view
        assert "Changed." not in view and "printf made" not in view
        assert app.controller is not None
        assert users(app) == ["look first"]

        # The next prompt goes on from the branch: the rewound message is not sent.
        await pilot.press("ctrl+c")  # clear the editor
        server.push(text_reply("Another way."))
        await settled(pilot, app, "try another way")
        assert user_texts(server.requests[-1]) == ["look first", "try another way"]

        # The picker now offers to undo the code restore: the files come back.
        await pilot.press("escape", "escape")
        screen = await picker(pilot, app)
        assert screen.visible_rows[0][0] == UNDO_KEY
        await pilot.press("up", "enter")  # to the top row (the newest was highlighted)
        await wait_until(pilot, lambda: "Undid the last code restore" in shown(app))
        assert (workspace / "created.txt").read_text() == "made"
    [summary] = list_sessions(workspace, root)
    assert recorded_users(summary.path) == ["look first", "try another way"]


async def test_conversation_only_keeps_files_and_the_typed_text(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, _ = recorded_app(server, workspace, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        await send(pilot, "/rewind")
        screen = await picker(pilot, app)
        assert screen.highlighted_key is not None
        await pilot.press("enter")
        await confirm(pilot, app)
        await pilot.press("2")
        await wait_until(pilot, lambda: "Restored the conversation" in shown(app))
        assert (workspace / "created.txt").read_text() == "made"
        assert "return 0" in (workspace / "sum.py").read_text()
        assert "Changed." not in shown(app)


async def test_the_text_goes_below_what_the_editor_holds(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, _ = recorded_app(server, workspace, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        app.commands.run("rewind")
        await picker(pilot, app)
        await pilot.press(*"look")  # the filter: only "look first" is left
        await pilot.press("enter")
        await confirm(pilot, app)
        # What the user types meanwhile is kept.
        app.prompt.insert("my draft")
        await pilot.press("2")
        await wait_until(pilot, lambda: "Restored the conversation" in shown(app))
        assert app.prompt.text == "my draft\n\nlook first"
        assert "Looked." not in shown(app)


async def test_cancel_changes_nothing(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, root = recorded_app(server, workspace, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        assert app.controller is not None
        history = list(app.controller.history)
        [summary] = list_sessions(workspace, root)
        await pilot.press("escape", "escape")
        await picker(pilot, app)
        await pilot.press("enter")
        await confirm(pilot, app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, RewindConfirm))
        await pilot.press("escape", "escape")
        await picker(pilot, app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, RewindPicker))
        await pilot.pause(0.1)
        assert app.controller.history == history
        assert app.prompt.text == ""
        assert (workspace / "created.txt").read_text() == "made"
        assert "Changed." in shown(app)
        assert load_session(summary.path).tree.rewinds == []


async def test_esc_esc_needs_an_empty_input_and_an_idle_session(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, _ = recorded_app(server, workspace, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        server.push(text_reply("First."))
        await settled(pilot, app, "first")
        await type_text(pilot, "something")
        await pilot.press("escape", "escape")
        await pilot.pause(0.2)
        assert app.screen is app.screen_stack[0]
        assert app.prompt.text == "something"

        # Running: Esc interrupts, a second Esc opens nothing.
        await pilot.press("ctrl+c")
        gate = Gate()
        server.push(text_reply("Held answer", gate=gate))
        await send(pilot, "second")
        await wait_gate(gate)
        await pilot.press("escape", "escape")
        assert app.controller is not None
        await app.controller.wait_idle()
        await pilot.pause(0.2)
        assert app.screen is app.screen_stack[0]
        assert "Interrupted" in shown(app)


async def test_refused_while_running(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, _ = recorded_app(server, workspace, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        server.push(text_reply("First."))
        await settled(pilot, app, "first")
        gate = Gate()
        server.push(text_reply("Held answer", gate=gate))
        await send(pilot, "second")
        await wait_gate(gate)
        assert app.controller is not None
        for command in ("rewind", "tree", "fork"):
            app.commands.run(command)
            await pilot.pause()
            assert app.screen is app.screen_stack[0], command
        assert "/rewind waits for an idle moment" in shown(app)
        assert "/tree waits" in shown(app) and "/fork waits" in shown(app)
        gate.open()
        await app.controller.wait_idle()
        assert users(app) == ["first", "second"]


async def test_an_unsaved_session_says_so(server: ScriptedServer, workspace: Path) -> None:
    app, _ = make_app(server, workspace)  # --no-session
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.controller is not None)
        app.commands.run("rewind")
        await pilot.pause()
        assert "This session is not saved: nothing to rewind." in shown(app)
        assert app.screen is app.screen_stack[0]


async def test_code_only_keeps_the_conversation_and_the_editor(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    app, _ = recorded_app(server, workspace, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await two_turns(pilot, app, server)
        await pilot.press("escape", "escape")
        await picker(pilot, app)
        await pilot.press("enter")
        await confirm(pilot, app)
        await pilot.press("3")
        await wait_until(pilot, lambda: "Restored 2 files to before" in shown(app))
        assert not (workspace / "created.txt").exists()
        assert (workspace / "sum.py").read_text() == ORIGINAL_SUM
        assert users(app) == ["look first", "change things"]
        assert "Changed." in shown(app)
        assert app.prompt.text == ""
