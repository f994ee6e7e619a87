"""Compaction in the app: the status bar's context fill, the activity panel while it
runs, the marker row that unfolds to the summary, and /compact (idle only)."""

from __future__ import annotations

from pathlib import Path

from ink_tui.ui.blocks.compaction_block import CompactionBlock
from ink_tui.ui.widgets.activity_panel import ActivityPanel
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer
from tests.test_compaction import reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)


async def submit(pilot, text: str) -> None:
    pilot.app.prompt.focus()
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def test_fill_marker_and_summary_in_the_app(server: ScriptedServer, workspace: Path) -> None:
    app, recorder = make_app(server, workspace, tools=[])
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        app.controller.provider.context_window = 128_000
        server.push(reply("First answer.", prompt_tokens=41_000))
        await submit(pilot, "first task")
        await wait_until(pilot, lambda: app.controller.state == "idle")
        status = app.query_one(StatusBar)
        await wait_until(pilot, lambda: "ctx 41.0k/128k 32%" in str(status.render()))

        # Past 80 %: the next prompt compacts first; the summary request is held.
        app.controller.provider.context_window = 50_000
        gate = Gate()
        server.push(reply("## Goal\nthe first task", gate=gate), reply("Second answer."))
        await submit(pilot, "second task")
        await wait_gate(gate)
        panel = app.query_one(ActivityPanel)
        await wait_until(pilot, lambda: "compacting" in str(panel.render()))
        gate.open()
        await wait_until(pilot, lambda: app.controller.state == "idle")

        transcript = app.query_one(Transcript)
        [marker] = transcript.blocks_of(CompactionBlock)
        assert "Context compacted: 41.0k →" in marker.plain_text()
        assert "the first task" not in marker.plain_text()  # folded
        region = transcript.block_region(marker)
        assert region is not None
        await pilot.click(Transcript, offset=(region.x + 3, region.y))
        await pilot.pause()
        assert marker.expanded and "## Goal\nthe first task" in marker.plain_text()
        assert "%" in status.context_label()
        assert status.context_label().startswith("ctx ")

        # /compact while running is refused with a hint, and the text comes back.
        gate2 = Gate()
        server.push(reply("Third answer.", gate=gate2))
        await submit(pilot, "third task")
        await wait_gate(gate2)
        await submit(pilot, "/compact keep it short")
        assert "waits for an idle moment" in transcript.plain_text()
        assert app.prompt.text == "/compact keep it short"
        gate2.open()
        await wait_until(pilot, lambda: app.controller.state == "idle")
    assert len(recorder.of("compaction_end")) == 1
