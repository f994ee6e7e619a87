"""Folded results show what matters for their kind (the whole app under the Pilot, real
tools, loopback server): an edit's diff its changed line, a long command its last lines
and the count above them, a short output all of it; expanding shows everything."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from ink_tui.core.events import ApprovalRequest
from ink_tui.core.messages import ToolCall
from ink_tui.tools.diff import unified_diff
from ink_tui.ui.app import InkApp
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.widgets.approval_question import _preview_lines
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 40)


def drawn(transcript: Transcript, block: ToolBlock) -> list[str]:
    """The block's lines as drawn, margins stripped."""
    return [line.text.strip() for line in transcript.block_lines(block)]


async def run_line(pilot: Pilot, text: str) -> ToolBlock:
    app = pilot.app
    assert isinstance(app, InkApp)
    await wait_until(pilot, lambda: app.controller is not None, what="the controller")
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.controller.state == "idle", within=20, what="idle")
    await pilot.pause()
    blocks = app.query_one(Transcript).blocks_of(ToolBlock)
    await wait_until(pilot, lambda: blocks[-1].result is not None, what="the result")
    return blocks[-1]


async def test_long_command_output_folds_to_its_last_lines_and_expands_whole(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        block = await run_line(pilot, "!seq 1 500")
        transcript = app.query_one(Transcript)
        lines = drawn(transcript, block)
        assert lines[0].startswith("✓ bash seq 1 500")
        assert lines[1:8] == ["… 495 lines above", "496", "497", "498", "499", "500", ""]
        assert lines[8] == "exit code 0"
        assert "1" not in lines and "495" not in lines
        # Expanding (Ctrl+O) shows all of it.
        await pilot.press("ctrl+o")
        await pilot.pause()
        lines = drawn(transcript, block)
        assert [str(n) for n in range(1, 501)] == lines[1:501]
        assert not any("lines above" in line for line in lines)


async def test_a_short_output_is_not_folded(server: ScriptedServer, workspace: Path) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        block = await run_line(pilot, "!seq 1 7")
        assert not block.foldable
        lines = drawn(app.query_one(Transcript), block)
        assert lines[1:10] == ["1", "2", "3", "4", "5", "6", "7", "", "exit code 0"]
        assert not any("more line" in line or "above" in line for line in lines)


async def test_an_edits_folded_diff_shows_the_changed_line(
    server: ScriptedServer, workspace: Path
) -> None:
    source = "".join(f"line {n}\n" for n in range(1, 31))
    (workspace / "notes.txt").write_text(source)
    edit = {"path": "notes.txt", "edits": [{"old_text": "line 20\n", "new_text": "LINE 20\n"}]}
    server.push(tool_reply([("edit", edit)]), text_reply("done"))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        block = await run_line(pilot, "change line 20")
        assert block.collapsed
        transcript = app.query_one(Transcript)
        lines = drawn(transcript, block)
        assert lines[1:6] == ["@@ -17,7 +17,7 @@", "line 19", "-line 20", "+LINE 20", "line 21"]
        assert lines[6] == "+4 more lines"
        # Click to expand: the whole diff, context and all.
        region = transcript.block_region(block)
        assert region is not None
        await pilot.click(transcript, offset=region.offset)
        await pilot.pause()
        lines = drawn(transcript, block)
        assert lines[1:11] == [
            "@@ -17,7 +17,7 @@",
            "line 17",
            "line 18",
            "line 19",
            "-line 20",
            "+LINE 20",
            "line 21",
            "line 22",
            "line 23",
            "",
        ]


def test_an_approval_preview_of_a_long_diff_shows_every_change() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 41))
    new = old.replace("line 5\n", "LINE 5\n").replace("line 20\n", "LINE 20\n")
    new = new.replace("line 35\n", "LINE 35\n")
    diff = unified_diff(old, new, "notes.txt")
    call = ToolCall(id="c", name="write", arguments={"path": "notes.txt", "content": new})
    request = ApprovalRequest(request_id="r", call=call, why="policy", preview=diff)
    shown = [line.plain for line in _preview_lines(request)]
    for n in (5, 20, 35):
        assert f"-line {n}" in shown and f"+LINE {n}" in shown
    assert len(shown) == 13 and shown[-1].startswith("… ") and shown[-1].endswith("more lines")
