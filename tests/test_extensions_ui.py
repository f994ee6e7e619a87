"""Extensions in the app, under the Pilot against the loopback server: an extension's
queued entry with its name as the badge (and removable like any entry), its message drawn
apart from the user's, its command in completion, the palette and at work, and the
question about an untrusted folder's extensions."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from ink_tui.extensions.startup import ExtensionOptions
from ink_tui.ui.app import InkApp
from ink_tui.ui.blocks.user_block import UserBlock
from ink_tui.ui.command_palette import SlashCommandProvider
from ink_tui.ui.screens.trust_extensions import TrustExtensions
from ink_tui.ui.widgets.completion_menu import CompletionMenu
from ink_tui.ui.widgets.queue_list import QueueList
from ink_tui.ui.widgets.queue_row import RowPart
from ink_tui.ui.widgets.transcript import Transcript
from tests.extension_helpers import PROBE, inject_spec, marked, user_messages, write_extension
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)


@pytest.fixture
def options(tmp_path: Path) -> ExtensionOptions:
    return ExtensionOptions(
        config_dir=tmp_path / "config", trust_file=tmp_path / "data" / "trusted.json"
    )


def app_with(server: ScriptedServer, workspace: Path, options: ExtensionOptions) -> InkApp:
    app, _ = make_app(server, workspace)
    app.extension_options = options
    return app


async def submit(pilot: Pilot[None], text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def test_an_extensions_queued_entry_shows_its_badge_and_can_be_removed(
    server: ScriptedServer, workspace: Path, options: ExtensionOptions
) -> None:
    write_extension(options.config_dir / "extensions", "probe", PROBE)  # type: ignore[operator]
    gate = Gate()
    server.push(text_reply("working", gate=gate))
    app = app_with(server, workspace, options)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.extension_host is not None, what="extensions")
        await submit(pilot, "do the work")
        await wait_gate(gate)
        await submit(pilot, "/inject " + inject_spec("run the linter", "follow_up", kind="task"))
        queue = app.query_one(QueueList)
        await wait_until(pilot, lambda: queue.count == 1, what="the queued entry")
        row = queue.rows[0]
        badge = row.query_one(".badge", RowPart)
        assert str(badge.render()) == "probe"
        assert badge.has_class("-extension")
        assert "follow-up · run the linter" in str(row.query_one(".text", RowPart).render())
        # Removable like any entry: focus the list, delete.
        await pilot.press("ctrl+q")
        await pilot.press("d")
        await wait_until(pilot, lambda: queue.count == 0, what="the entry removed")
        gate.open()
        await app.controller.wait_idle()
    assert len(server.requests) == 1


async def test_an_extensions_message_is_drawn_apart_from_the_users(
    server: ScriptedServer, workspace: Path, options: ExtensionOptions
) -> None:
    write_extension(options.config_dir / "extensions", "probe", PROBE)  # type: ignore[operator]
    gate = Gate()
    server.push(text_reply("working", gate=gate), text_reply("noted"))
    app = app_with(server, workspace, options)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.extension_host is not None, what="extensions")
        await submit(pilot, "do the work")
        await wait_gate(gate)
        await submit(pilot, "/inject " + inject_spec("the API is frozen", "steer"))
        gate.open()
        await wait_until(pilot, lambda: len(server.requests) == 2, what="the second request")
        await app.controller.wait_idle()
        await pilot.pause()
        blocks = [b for b in app.query_one(Transcript).blocks if isinstance(b, UserBlock)]
        assert [(b.text, b.source) for b in blocks] == [
            ("do the work", None),
            ("the API is frozen", "probe"),
        ]
        assert blocks[1].plain_text() == " ⚙ probe · fact  the API is frozen"
    assert user_messages(server.requests[1])[-1] == marked("probe", "fact", "the API is frozen")


async def test_a_registered_command_is_in_completion_and_the_palette(
    server: ScriptedServer, workspace: Path, options: ExtensionOptions
) -> None:
    write_extension(options.config_dir / "extensions", "probe", PROBE)  # type: ignore[operator]
    app = app_with(server, workspace, options)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.extra_commands != [], what="extension commands")
        await type_text(pilot, "/inj")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: bool(menu.candidates), what="completion")
        assert [(c.label, c.detail) for c in menu.candidates] == [
            ("/inject", "send a message the test describes")
        ]
        provider = SlashCommandProvider(app.screen)
        hits = [hit.text async for hit in provider.search("inject")]
        assert hits == ["/inject [argument] — send a message the test describes"]
        discovered = [hit.text async for hit in provider.discover()]
        assert discovered[-1] == "/inject [argument] — send a message the test describes"


def trusted_app(server: ScriptedServer, workspace: Path, options: ExtensionOptions) -> InkApp:
    return app_with(server, workspace, options)


async def test_the_app_asks_about_an_untrusted_folder_and_remembers_allow(
    server: ScriptedServer, workspace: Path, options: ExtensionOptions
) -> None:
    house = """
    def setup(ink):
        ink.register_command("/house", lambda argument: None, "the house command")
    """
    write_extension(workspace / ".ink" / "extensions", "house", house)
    app = trusted_app(server, workspace, options)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustExtensions), what="question")
        assert app.extra_commands == []  # nothing runs before the answer
        await pilot.press("up", "enter")  # "Allow" (the cursor starts on "Not now")
        await wait_until(pilot, lambda: app.extra_commands != [], what="loaded")
        assert [c.name for c in app.extra_commands] == ["house"]
    assert options.trust_file is not None and options.trust_file.exists()

    # Asked once: the next start loads them without a question.
    app = trusted_app(server, workspace, options)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.extra_commands != [], what="loaded")
        assert not isinstance(app.screen, TrustExtensions)

    # A changed file asks again; "Not now" (Escape) leaves them out and says so.
    (workspace / ".ink" / "extensions" / "house.py").write_text("def setup(ink):\n    pass\n")
    app = trusted_app(server, workspace, options)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustExtensions), what="question")
        await pilot.press("escape")
        await wait_until(
            pilot,
            lambda: "were not loaded (house.py)" in app.query_one(Transcript).plain_text(),
            what="the notice",
        )
        assert app.extension_host is not None and app.extension_host.loaded == {}
