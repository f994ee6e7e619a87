"""Sessions and slash commands in the running app (Pilot, loopback server)."""

from __future__ import annotations

from pathlib import Path

from ink_tui.session.catalog import list_sessions
from ink_tui.session.config import load_config
from ink_tui.session.session_reader import load_session
from ink_tui.ui.screens.help_screen import HelpScreen
from ink_tui.ui.screens.list_picker import ListPicker
from ink_tui.ui.startup import SessionPlan
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import wait_gate
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)


def shown(app) -> str:
    return app.query_one(Transcript).plain_text()


async def send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def test_a_session_is_saved_and_resume_rebuilds_view_and_history(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    server.push(tool_reply([("read", {"path": "README.md"})]), text_reply("A tiny project."))
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "what is this?")
        await app.controller.wait_idle()
        first_history = list(app.controller.history)
    [summary] = list_sessions(workspace, root)
    assert summary.first_prompt == "what is this?"
    assert load_session(summary.path).history == first_history

    server.push(text_reply("Still tiny."))
    app2, _ = make_app(
        server, workspace, plan=SessionPlan("resume", summary.path), session_root=root
    )
    async with app2.run_test(size=SIZE) as pilot:
        # The file is read on a thread while the controller's modules are imported.
        await wait_until(pilot, lambda: f"Resumed session {summary.id}" in shown(app2))
        view = shown(app2)
        assert "what is this?" in view and "A tiny project." in view
        assert "read README.md" in view
        assert f"Resumed session {summary.id}" in view
        await send(pilot, "and now?")
        await app2.controller.wait_idle()
    # The model got the same history it had, then the new prompt.
    resumed = server.requests[2]["messages"]
    assert resumed[: len(server.requests[1]["messages"])] == server.requests[1]["messages"]
    assert resumed[-1] == {"role": "user", "content": "and now?"}
    assert load_session(summary.path).history[-1].text == "Still tiny."  # type: ignore[union-attr]


async def test_unknown_command_says_so_and_gives_the_text_back(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/frobnicate now")
        assert "frobnicate" in shown(app)
        assert app.prompt.text == "/frobnicate now"
        assert server.requests == []


async def test_leading_space_sends_a_literal_slash(server: ScriptedServer, workspace: Path) -> None:
    server.push(text_reply("It is a file."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, " /etc/hosts is what?")
        await app.controller.wait_idle()
    assert server.requests[0]["messages"][-1]["content"] == "/etc/hosts is what?"


async def test_help_clear_copy_and_quit(server: ScriptedServer, workspace: Path) -> None:
    server.push(text_reply("The answer to copy."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "question")
        await app.controller.wait_idle()
        await send(pilot, "/copy")
        assert app.clipboard == "The answer to copy."
        await send(pilot, "/help")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        await send(pilot, "/clear")
        assert shown(app) == ""
        assert len(app.controller.history) == 2  # the screen only
        await send(pilot, "/quit")
    assert app.return_code == 0


async def test_new_and_sessions_and_resume_by_id(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    server.push(text_reply("first answer"), text_reply("second answer"))
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first session prompt")
        await app.controller.wait_idle()
        first_id = app.binding.writer.id
        await send(pilot, "/new")
        assert app.controller.history == []
        assert "first session prompt" not in shown(app)
        await send(pilot, "second session prompt")
        await app.controller.wait_idle()
        await send(pilot, "/sessions")
        await wait_until(pilot, lambda: first_id in shown(app), what="the session list")
        await send(pilot, f"/resume {first_id[:6]}")
        await wait_until(pilot, lambda: "first answer" in shown(app))
        assert [m.role for m in app.controller.history] == ["user", "assistant"]
    assert len(list_sessions(workspace, root)) == 2


async def test_modes_and_model_pickers(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text(
        f'[providers.local]\nbase_url = "{server.base_url}"\nmodels = ["alpha", "beta"]\n'
    )
    # A project's providers apply once the file is trusted (tests/test_project_trust.py).
    config = load_config(workspace, user_config_path=tmp_path / "none.toml", trust_project=True)
    server.push(text_reply("from beta"))
    app, _ = make_app(server, workspace, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/modes")
        assert isinstance(app.screen, ListPicker)
        await pilot.press("o", "n", "e")  # filters to the two one-at-a-time rows
        await pilot.press("enter")
        await pilot.pause()
        assert app.controller.settings.steering_mode == "one-at-a-time"
        await send(pilot, "/model local/beta")
        assert "beta" in shown(app)
        await send(pilot, "hi")
        await app.controller.wait_idle()
    assert server.requests[-1]["model"] == "beta"


async def test_config_problems_show_as_notices(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text('steer_mode = "all"\n')
    config = load_config(workspace, user_config_path=tmp_path / "none.toml")
    app, _ = make_app(server, workspace, config=config)
    app.config_notices = list(config.problems)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "unknown key 'steer_mode'" in shown(app))
        assert "line 1" in shown(app)


async def test_a_queue_kept_by_the_interrupt_is_shown_paused_and_enter_resumes_it(
    server: ScriptedServer, workspace: Path
) -> None:
    from ink_tui.control.run_settings import RunSettings
    from ink_tui.ui.widgets.queue_list import QueueList
    from tests.scripted_server import Gate

    gate = Gate()
    server.push(text_reply("working", gate=gate), text_reply("resumed"))
    app, _ = make_app(server, workspace, settings=RunSettings(interrupt_queue="keep"))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "go")
        await wait_gate(gate)
        await send(pilot, "kept steer")
        await pilot.press("ctrl+c")
        await app.controller.wait_idle()
        await pilot.pause()
        queue = app.query_one(QueueList)
        assert queue.display and queue.paused
        assert app.prompt.text == ""
        await pilot.press("enter")
        await app.controller.wait_idle()
    assert server.requests[1]["messages"][-1]["content"] == "kept steer"


async def test_theme_and_key_bindings_come_from_the_config(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text(
        'theme = "nord"\n[keys]\ntoggle_thinking = "f2"\n'
    )
    config = load_config(workspace, user_config_path=tmp_path / "none.toml")
    app, _ = make_app(server, workspace, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == "nord"
        transcript = app.query_one(Transcript)
        assert transcript.show_thinking
        await pilot.press("f2")
        assert not transcript.show_thinking


async def test_context_command_lists_the_agents_files(
    server: ScriptedServer, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Always run the tests.\n")
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/context")
        assert str(workspace / "AGENTS.md") in shown(app)


async def test_input_history_persists_across_sessions_per_workspace(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    server.push(text_reply("ok"))
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "remember this line")
        await app.controller.wait_idle()
    app2, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app2.run_test(size=SIZE) as pilot:
        # The history is read on a thread while the controller's modules are imported.
        await wait_until(pilot, lambda: app2.controller is not None)
        await pilot.press("up")
        assert app2.prompt.text == "remember this line"
    other = tmp_path / "elsewhere"
    other.mkdir()
    app3, _ = make_app(server, other, plan=SessionPlan("new"), session_root=root)
    async with app3.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app3.controller is not None)
        await pilot.press("up")
        assert app3.prompt.text == ""


async def test_quick_inputs_reach_the_history_file_all_and_in_order(
    workspace: Path, tmp_path: Path
) -> None:
    from ink_tui.control.bus import EventBus
    from ink_tui.session.input_history_store import InputHistoryStore
    from ink_tui.ui.session_binding import SessionBinding

    root = tmp_path / "data"
    binding = SessionBinding(EventBus(), workspace, root=root)
    for n in range(40):
        binding.remember_input(f"line {n}")
    await binding.aclose()
    assert InputHistoryStore(workspace, root=root).load() == [f"line {n}" for n in range(40)]


async def test_a_damaged_input_history_is_a_notice_not_a_crash(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    from ink_tui.session.store_paths import input_history_path

    root = tmp_path / "data"
    path = input_history_path(workspace, root)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Could not read the input history" in shown(app))
        await type_text(pilot, "still works")
        assert app.prompt.text == "still works"


async def test_resuming_a_file_that_is_not_a_session_says_so_and_starts_afresh(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    bogus = tmp_path / "not-a-session.jsonl"
    bogus.write_text("this is not json\n")
    server.push(text_reply("Fresh start."))
    app, _ = make_app(server, workspace, plan=SessionPlan("resume", bogus), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Could not resume" in shown(app))
        assert str(bogus) in shown(app)
        await send(pilot, "hello")
        await app.controller.wait_idle()
        assert "Fresh start." in shown(app)
    [summary] = list_sessions(workspace, root)
    assert summary.first_prompt == "hello"


async def test_resume_from_the_picker_brings_the_chosen_session_back(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    from ink_tui.ui.screens.session_picker import SessionPicker

    root = tmp_path / "data"
    server.push(text_reply("the older answer"), text_reply("the newer answer"))
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "older prompt")
        await app.controller.wait_idle()
        await send(pilot, "/new")
        await send(pilot, "newer prompt")
        await app.controller.wait_idle()
        await send(pilot, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.press("enter")  # the only other session: the older one
        await wait_until(pilot, lambda: "the older answer" in shown(app), what="the resume")
        assert "the newer answer" not in shown(app)
        assert [m.content for m in app.controller.history if m.role == "user"] == ["older prompt"]


async def test_a_failed_session_write_found_while_listing_is_shown_with_its_cause(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    from ink_tui.session.session_writer import SessionWriteError

    root = tmp_path / "data"
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.binding is not None and app.binding.writer)

        writer = app.binding.writer

        def failed_drain(*, sync: bool = False) -> None:
            # As the writer reports a write its thread could not do (see SessionWriter).
            raise SessionWriteError(writer.path, OSError(28, "No space left on device"))

        writer.drain = failed_drain
        await send(pilot, "/sessions")
        await wait_until(pilot, lambda: "No space left on device" in shown(app))
        assert "Session file:" in shown(app)
