"""Tokens and cost per session, /status, the palette's entries and /copy, in the running
app (Pilot, loopback server; the scripted server reports 10 input and 5 output tokens a
reply)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette

from ink_tui.control.bus import EventBus
from ink_tui.control.controller import RunController
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.messages import AssistantMessage, Usage, UserMessage
from ink_tui.core.prices import Price, cost_of, format_cost, price_for
from ink_tui.providers.demo import DemoProvider
from ink_tui.session.config import load_config
from ink_tui.session.session_writer import SessionWriter
from ink_tui.tools import default_tools
from ink_tui.ui.app import InkApp
from ink_tui.ui.slash_commands import COMMANDS
from ink_tui.ui.startup import SessionPlan
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer, text_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (120, 32)


def shown(app) -> str:
    return app.query_one(Transcript).plain_text()


def status_line(app) -> str:
    """The status bar's tokens and cost, as the app paints them."""
    return app.query_one(StatusBar).tokens_label()


async def send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def ask(pilot, text: str) -> None:
    await send(pilot, text)
    await pilot.app.controller.wait_idle()
    await pilot.pause()


def saved_session(workspace: Path, root: Path, model: str, replies: list[Usage]) -> Path:
    """A session file written by the real writer, one prompt and reply per usage."""
    writer = SessionWriter.create(workspace, model, root=root)
    for n, usage in enumerate(replies):
        writer.record_user(UserMessage(f"question {n}"))
        writer.record_assistant(AssistantMessage(text=f"answer {n}", usage=usage, model=model))
    writer.close()
    return writer.path


# -- tokens belong to the session ------------------------------------------------------


async def test_two_prompts_add_up_and_new_starts_the_tokens_at_zero(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    server.push(text_reply("one"), text_reply("two"))
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=tmp_path / "d")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "first")
        await ask(pilot, "second")
        status = app.query_one(StatusBar)
        assert (status.tokens_in, status.tokens_out) == (20, 10)
        assert "↑20 ↓10" in status_line(app)
        # The scripted model has no known price: no cost, never a guess.
        assert "$" not in status_line(app)
        first_id = app.binding.writer.id
        await send(pilot, "/new")
        await pilot.pause()
        assert (status.tokens_in, status.tokens_out) == (0, 0)
        assert "↑0 ↓0" in status_line(app)
        # Switching back with /resume: the first session's recorded tokens again.
        await send(pilot, f"/resume {first_id[:8]}")
        await wait_until(pilot, lambda: status.tokens_in == 20, what="the resumed tokens")
        assert "↑20 ↓10" in status_line(app)


async def test_a_resumed_session_starts_at_its_files_sum_with_its_cost(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    usages = [Usage(1200, 300), Usage(2400, 500, cached_tokens=1000)]
    path = saved_session(workspace, root, "gpt-4o", usages)
    app, _ = make_app(server, workspace, plan=SessionPlan("resume", path), session_root=root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "answer 1" in shown(app), what="the resumed session")
        await pilot.pause()
        status = app.query_one(StatusBar)
        assert (status.tokens_in, status.tokens_out) == (3600, 800)
        price = price_for("gpt-4o")
        assert price is not None
        expected = format_cost(sum(cost_of(u, price) for u in usages))
        assert expected.startswith("$0.0")
        assert f"↑3.6k ↓800 {expected}" in status_line(app)
        # A reply of the scripted model (no price) makes the cost unknown.
        server.push(text_reply("more"))
        await ask(pilot, "again")
        assert (status.tokens_in, status.tokens_out) == (3610, 805)
        assert "$" not in status_line(app)


async def test_a_prices_entry_in_the_config_gives_the_cost(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text(
        '[prices]\n"scripted-model" = { input = 1000.0, output = 2000.0 }\n'
    )
    config = load_config(workspace, user_config_path=tmp_path / "none.toml")
    assert config.prices == {"scripted-model": Price(1000.0, 2000.0)}
    server.push(text_reply("priced"))
    app, _ = make_app(server, workspace, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "how much?")
        # 10 input tokens at $1000/M and 5 output at $2000/M: 1 + 1 cents.
        assert "↑10 ↓5 $0.020" in status_line(app)


def test_a_prices_entry_overrides_the_built_in_price() -> None:
    mine = Price(1.0, 2.0)
    assert price_for("gpt-4o", {"gpt-4o": mine}) is mine
    assert price_for("openai/gpt-4o", {"gpt-4o": mine}) is mine
    assert price_for("gpt-4o-2024-08-06") == Price(2.50, 10.00, 1.25)
    assert price_for("gpt-4o-mini") == Price(0.15, 0.60, 0.075)
    assert price_for("claude-opus-4-5-20251101") == Price(5.00, 25.00, 0.50)
    assert price_for("qwen3") is None
    assert price_for("demo") is None
    # Cached input at the cache price, the rest at the input price.
    assert cost_of(Usage(1_000_000, 0, cached_tokens=400_000), Price(1.0, 2.0, 0.1)) == (
        pytest.approx(0.6 + 0.04)
    )


async def test_status_lists_the_session_its_file_tokens_cost_context_and_approval(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    server.push(text_reply("hello"))
    app, _ = make_app(server, workspace, plan=SessionPlan("new"), session_root=tmp_path / "d")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "hi")
        await send(pilot, "/status")
        text = shown(app)
        writer = app.binding.writer
        assert f"Session {writer.id}" in text
        assert str(writer.path) in text
        assert "model:    scripted-model @ loopback" in text
        assert "tokens:   10 in, 5 out (15 in all)" in text
        assert "price unknown for scripted-model: set [prices] in the config" in text
        assert "context:" in text
        assert f"approval: {app.controller.approvals.policy}" in text


# -- the palette --------------------------------------------------------------------------


async def test_the_palette_lists_each_command_once_with_its_arguments_and_textuals_own(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        palette = app.screen
        commands = palette.query_one(CommandList)
        # The list may be shown in batches while it is gathered (a batch when a quarter
        # second passes, as on a busy machine): "-ready" is set once all of it is in.
        await wait_until(
            pilot,
            lambda: palette.has_class("-ready") and commands.option_count > len(COMMANDS),
            what="discovery",
        )
        await pilot.pause()
        shown_options = [
            str(commands.get_option_at_index(n).prompt) for n in range(commands.option_count)
        ]
        firsts = [text.splitlines()[0] for text in shown_options]
        for command in COMMANDS:
            entries = [text for text in shown_options if text.startswith(f"/{command.name} ")]
            assert entries == [f"{command.usage} — {command.summary}"], command.name
        assert "/resume [session id] — Resume a saved session" in firsts
        # Textual's system commands are there, each once, but its Quit (ink's /quit is).
        assert any(text.startswith("Theme") for text in firsts)
        assert any(text.startswith("Screenshot") for text in firsts)
        assert not any(text.startswith("Quit") for text in firsts)
        assert len(firsts) == len(set(firsts))
        # Searching keeps the arguments too (Textual's highlight read them as markup).
        await type_text(pilot, "resume")
        await wait_until(
            pilot,
            lambda: any(
                str(commands.get_option_at_index(n).prompt).startswith("/resume [session id]")
                for n in range(commands.option_count)
            ),
            what="the search's hit",
        )


# -- /copy -------------------------------------------------------------------------------


def fake_tool(folder: Path, name: str, into: Path, status: int = 0) -> None:
    folder.mkdir(exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\ncat > '{into}'\nexit {status}\n")
    script.chmod(0o755)


async def copy_answer(server: ScriptedServer, workspace: Path) -> str:
    server.push(text_reply("The answer to copy."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "question")
        await send(pilot, "/copy")
        return shown(app)


async def test_copy_uses_a_clipboard_tool_on_path_and_says_so(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools, clip = tmp_path / "bin", tmp_path / "clip.txt"
    fake_tool(tools, "xclip", clip)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    text = await copy_answer(server, workspace)
    assert "Copied the last answer (19 characters) to the clipboard (via xclip)." in text
    assert clip.read_text() == "The answer to copy."


async def test_copy_without_a_tool_says_it_sent_osc52_and_a_failing_tool_is_named(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    fake_tool(tools, "xsel", tmp_path / "clip.txt", status=1)
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.delenv("TMUX", raising=False)
    text = await copy_answer(server, workspace)
    assert "Sent the last answer (19 characters) to the terminal's clipboard (OSC 52)" in text
    assert "your terminal may not accept it" in text
    assert "(xsel: exit status 1)" in text
    assert "Copied" not in text and "tmux" not in text


async def test_copy_under_tmux_adds_the_set_clipboard_note(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
    text = await copy_answer(server, workspace)
    assert "(OSC 52)" in text
    assert "Under tmux, set `set -g set-clipboard on`" in text


async def test_status_on_the_offline_demo_says_it_costs_nothing(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo's replies report tokens but no price: asking for `[prices]` for a model
    # that runs offline, on nothing that bills, would send the user looking for one.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from tests.test_ui_demo_tour import demo_app

    app, _ = demo_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        status = app.query_one(StatusBar)
        await send(pilot, "look around")
        await wait_until(pilot, lambda: status.tokens_in > 0, what="the demo's tokens")
        await pilot.press("ctrl+c")
        await app.controller.wait_idle()
        await send(pilot, "/status")
        text = shown(app)
        assert "cost:     none: the offline demo model is free" in text
        assert "[prices]" not in text


def saved_demo_app(workspace: Path, root: Path) -> InkApp:
    """The offline demo model (it reports tokens and a 5k window), its session saved."""

    def make_controller(bus: EventBus) -> RunController:
        return RunController(
            provider=DemoProvider(workspace, chars_per_second=0),
            tools=default_tools(),
            workspace=workspace,
            system_prompt="You are a test.",
            settings=RunSettings(approval="ask"),
            bus=bus,
        )

    return InkApp(
        make_controller,
        model_label="demo",
        is_demo=True,
        workspace=workspace,
        plan=SessionPlan("new"),
        session_root=root,
    )


async def test_new_and_resume_drop_the_last_sessions_context_fill(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fill is the last request's: once the conversation is another one (/new, or a
    # session resumed), it says nothing of it until that one's next request.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    app = saved_demo_app(workspace, tmp_path / "d")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        status = app.query_one(StatusBar)
        await send(pilot, "look around")
        await wait_until(pilot, lambda: status.context_label() != "", what="the context fill")
        await pilot.press("ctrl+c")
        await app.controller.wait_idle()
        first_id = app.binding.writer.id
        await send(pilot, "/new")
        await wait_until(pilot, lambda: status.tokens_in == 0, what="the new session")
        assert status.context_label() == ""
        assert "ctx " not in str(status.render())
        await send(pilot, "look around again")
        await wait_until(pilot, lambda: status.context_label() != "", what="its own fill")
        await pilot.press("ctrl+c")
        await app.controller.wait_idle()
        await send(pilot, f"/resume {first_id[:8]}")
        await wait_until(pilot, lambda: status.context_label() == "", what="the fill dropped")
