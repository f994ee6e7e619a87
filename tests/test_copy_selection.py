"""Ctrl+C on text selected in the transcript says what the copy did, as /copy does (issue
#19 item 9): through a clipboard tool when one is on PATH ("Copied … (via xclip)"), else
"Sent … to the terminal (OSC 52)", with tmux's setting under tmux, never "Copied" for a
sequence nothing confirms. The whole app under the Pilot, loopback server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.pilot import Pilot

from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.widgets.hint_row import HintRow
from ink_tui.ui.widgets.transcript import Transcript
from tests.scripted_server import ScriptedServer, text_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (120, 32)
WORDS = "Copy these words"


async def select_and_copy(pilot: Pilot, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], str]:
    """Ask, select the answer's first words with the mouse, press Ctrl+C; the hint row's
    flashes from then on and what it shows right after."""
    app = pilot.app
    await wait_until(pilot, lambda: app.controller is not None, what="the controller")
    await type_text(pilot, "say something")
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.controller.state == "idle", what="idle")
    transcript = app.query_one(Transcript)
    await wait_until(pilot, lambda: bool(transcript.blocks_of(AnswerBlock)), what="the answer")
    await pilot.pause()
    (answer,) = transcript.blocks_of(AnswerBlock)
    region = transcript.block_region(answer)
    assert region is not None
    left = region.x + 2  # the answer's own left padding
    last = left + len(WORDS) - 1
    await pilot.mouse_down(transcript, offset=(left, region.y))
    await pilot.hover(transcript, offset=(last, region.y))
    await pilot.mouse_up(transcript, offset=(last, region.y))
    await pilot.pause()
    assert app.screen.get_selected_text() == WORDS
    hints = app.query_one(HintRow)
    seen: list[str] = []
    flash = hints.flash

    def spy(message: str, seconds: float = 2.0) -> None:
        seen.append(message)
        flash(message, seconds)

    monkeypatch.setattr(hints, "flash", spy)
    await pilot.press("ctrl+c")
    await pilot.pause()
    assert app.screen.get_selected_text() is None
    return seen, str(hints.render())


async def test_without_a_tool_under_tmux_it_says_osc_52_and_the_tmux_setting(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
    server.push(text_reply(f"{WORDS} please."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        flashes, row = await select_and_copy(pilot, monkeypatch)
        assert app.clipboard == WORDS  # the OSC 52 sequence was sent
        assert flashes == [
            f"Sent {len(WORDS)} characters to the terminal (OSC 52); "
            "under tmux it needs `set -g set-clipboard on`"
        ]
        assert "Copied" not in row and "(OSC 52)" in row


async def test_without_a_tool_outside_tmux_it_says_osc_52_only(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    monkeypatch.delenv("TMUX", raising=False)
    server.push(text_reply(f"{WORDS} please."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        flashes, _ = await select_and_copy(pilot, monkeypatch)
        assert flashes == [f"Sent {len(WORDS)} characters to the terminal (OSC 52)"]


async def test_a_clipboard_tool_on_path_takes_it_and_is_named(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools, clip = tmp_path / "bin", tmp_path / "clip.txt"
    tools.mkdir()
    (tools / "xclip").write_text(f"#!/bin/sh\ncat > '{clip}'\n")
    (tools / "xclip").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    server.push(text_reply(f"{WORDS} please."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        flashes, _ = await select_and_copy(pilot, monkeypatch)
        assert flashes == [f"Copied {len(WORDS)} characters (via xclip)"]
        assert clip.read_text() == WORDS
