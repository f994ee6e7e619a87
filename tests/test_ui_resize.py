"""Resizing the terminal below the minimum and back, under the Pilot.

The "too small" notice must follow the terminal's new size (not the size before the
resize), and keys typed while it is up must still reach the input.
"""

from __future__ import annotations

from pathlib import Path

from ink_tui.ui.widgets.prompt_input import PromptInput
from ink_tui.ui.widgets.too_small import TooSmall
from tests.scripted_server import ScriptedServer
from tests.ui_helpers import make_app, wait_until

BIG = (100, 32)
SMALL = (40, 10)


def notice_shown(app) -> bool:
    return app.query_one(TooSmall).display and app.screen.has_class("-too-small")


async def test_resize_down_and_back_shows_then_drops_the_notice(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=BIG) as pilot:
        await pilot.pause()
        assert not notice_shown(app)

        await pilot.resize_terminal(*SMALL)
        await wait_until(pilot, lambda: notice_shown(app), what="the too-small notice")
        # The notice names the size the terminal has now.
        assert "40×10" in str(app.query_one(TooSmall).render())

        await pilot.resize_terminal(*BIG)
        await wait_until(pilot, lambda: not notice_shown(app), what="the notice to go")
        assert app.query_one(PromptInput).display


async def test_keys_typed_while_too_small_land_in_the_input(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=BIG) as pilot:
        await pilot.press(*"abc")
        await pilot.resize_terminal(*SMALL)
        await wait_until(pilot, lambda: notice_shown(app), what="the too-small notice")

        await pilot.press(*"def")
        await pilot.resize_terminal(60, 16)  # exactly the minimum is usable
        await wait_until(pilot, lambda: not notice_shown(app), what="the notice to go")
        await pilot.press(*"ghi")

        prompt = app.query_one(PromptInput)
        assert prompt.text == "abcdefghi"
        assert app.focused is prompt
        # Nothing was sent: the keys went to the editor, not to a run.
        assert server.requests == []


async def test_only_one_dimension_too_small_still_shows_the_notice(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=BIG) as pilot:
        await pilot.resize_terminal(59, 40)
        await wait_until(pilot, lambda: notice_shown(app), what="the notice at 59 wide")
        await pilot.resize_terminal(120, 15)
        await wait_until(
            pilot,
            lambda: "120×15" in str(app.query_one(TooSmall).render()),
            what="the notice at 15 high",
        )
        await pilot.resize_terminal(120, 16)
        await wait_until(pilot, lambda: not notice_shown(app), what="the notice to go")


async def test_resizing_while_help_is_open_keeps_the_app_and_the_notice_right(
    server: ScriptedServer, workspace: Path
) -> None:
    from ink_tui.ui.screens.help_screen import HelpScreen

    app, _ = make_app(server, workspace)
    async with app.run_test(size=BIG) as pilot:
        await pilot.press(*"/help", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")

        await pilot.resize_terminal(*SMALL)
        await wait_until(pilot, lambda: notice_shown_on_main(app), what="the notice")
        await pilot.resize_terminal(*BIG)
        await wait_until(pilot, lambda: not notice_shown_on_main(app), what="the notice to go")

        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), what="help closed")
        await pilot.press(*"ok")
        assert app.query_one(PromptInput).text == "ok"


def notice_shown_on_main(app) -> bool:
    main = app.screen_stack[0]
    return main.query_one(TooSmall).display and main.has_class("-too-small")
