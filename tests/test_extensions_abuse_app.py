"""The app shows what programs are told about misbehaving extensions: one interrupted
while loading is an error notice naming the file (and the app starts), and a settle loop
ends with a notice saying it was stopped (the app idle, the budget's runs and no more)."""

from __future__ import annotations

from pathlib import Path

from ink_tui.extensions.budget import MAX_TURNS_PER_PROMPT
from ink_tui.extensions.startup import ExtensionOptions
from ink_tui.ui.widgets.transcript import Transcript
from tests.extension_helpers import write_extension
from tests.scripted_server import ScriptedServer, text_reply
from tests.test_extensions_abuse import SETTLE_LOOP
from tests.ui_helpers import make_app, type_text, wait_until


async def test_the_app_names_a_broken_extension_and_stops_a_settle_loop(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    options = ExtensionOptions(
        config_dir=tmp_path / "config", trust_file=tmp_path / "data" / "trusted.json"
    )
    folder = tmp_path / "config" / "extensions"
    write_extension(folder, "a_broken", "def setup(ink):\n    raise KeyboardInterrupt\n")
    write_extension(folder, "loop", SETTLE_LOOP)
    server.push(*[text_reply(f"answer {n}") for n in range(MAX_TURNS_PER_PROMPT + 3)])
    app, _ = make_app(server, workspace)
    app.extension_options = options
    async with app.run_test(size=(100, 32)) as pilot:
        transcript = app.query_one(Transcript)
        await wait_until(
            pilot,
            lambda: "a_broken.py was not loaded: KeyboardInterrupt" in transcript.plain_text(),
            within=30,
            what="the load failure",
        )
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: "Extension 'loop' was stopped: it set off" in transcript.plain_text(),
            what="the stop",
            within=30,
        )
        await wait_until(
            pilot,
            lambda: app.controller is not None and app.controller.state == "idle",
            within=30,
            what="idle",
        )
        assert len(server.requests) == 1 + MAX_TURNS_PER_PROMPT
