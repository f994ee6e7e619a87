"""Ctrl+C never loses restored text without a visible way back (issue item 1).

A follow-up queued while a run goes on comes back into the editor when Ctrl+C aborts the
run; a later Ctrl+C clears it, keeps it as the newest history entry and says "Cleared;
press Up to bring it back"; a Ctrl+C right after that only arms quitting, with its hint,
and Up brings the text back. Through the Pilot and through the real `ink` on a pty.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ink_tui.ui import clock, ctrl_c
from ink_tui.ui.ctrl_c import CLEARED_HINT, QUIT_HINT
from ink_tui.ui.widgets.hint_row import HintRow
from tests.pty_terminal import PtyInk
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)
CTRL_C = b"\x03"
ALT_ENTER = b"\x1b\r"
UP = b"\x1b[A"
MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}


@contextmanager
def frozen_ui_clock() -> Iterator[Callable[[float], None]]:
    """The UI clock (it times the Ctrl+C windows) moves only when told."""
    now = 1000.0

    def later(seconds: float) -> None:
        nonlocal now
        now += seconds
        clock.freeze(now)

    clock.freeze(now)
    try:
        yield later
    finally:
        clock.freeze(None)


def flashes_of(hints: HintRow, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every message the hint row flashes from now on (a flash lasts a real moment, too
    short to be sure of catching on screen on a busy machine)."""
    seen: list[str] = []
    flash = hints.flash

    def spy(message: str, seconds: float = 2.0) -> None:
        seen.append(message)
        flash(message, seconds)

    monkeypatch.setattr(hints, "flash", spy)
    return seen


async def test_restored_follow_up_cleared_by_ctrl_c_comes_back_with_up(
    server: ScriptedServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    server.push(text_reply("streaming", gate=gate))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_gate(gate)
        await type_text(pilot, "the follow-up")
        await pilot.press("alt+enter")
        await wait_until(pilot, lambda: len(app.controller.queue) == 1, what="the queued entry")
        hints = app.query_one(HintRow)
        flashes = flashes_of(hints, monkeypatch)
        with frozen_ui_clock() as moment_later:
            await pilot.press("ctrl+c")
            await app.controller.wait_idle()
            await wait_until(pilot, lambda: app.prompt.text == "the follow-up", what="restore")
            # A second press now would still quit (130): the hint row says so once the
            # run has settled, instead of showing nothing.
            await wait_until(pilot, lambda: f"{QUIT_HINT} now" in flashes, what="the quit hint")

            moment_later(1.0)
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert app.prompt.text == ""
            assert flashes[-1] == CLEARED_HINT == "Cleared; press Up to bring it back"
            assert CLEARED_HINT in str(hints.render())

            # Right after the clear: no quit, only the armed hint.
            moment_later(0.1)
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert app.is_running
            assert flashes[-1] == QUIT_HINT == "Press Ctrl+C again to quit"

            await pilot.press("up")
            await pilot.pause()
            assert app.prompt.text == "the follow-up"
        assert app.is_running


async def test_a_draft_cleared_twice_is_still_one_up_away(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "first draft")
        with frozen_ui_clock():
            await pilot.press("ctrl+c")
            await type_text(pilot, "second draft")
            # Two quick presses: the first clears, the second only arms quitting.
            await pilot.press("ctrl+c")
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert app.is_running
            await pilot.press("up")
            assert app.prompt.text == "second draft"
            await pilot.press("up")
            assert app.prompt.text == "first draft"
            # Down walks back to the (empty) draft.
            await pilot.press("down", "down")
            assert app.prompt.text == ""


async def test_the_cleared_hint_ends_once_the_text_is_back_or_new_text_is_typed(
    server: ScriptedServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Far longer than the waits below: only the text coming back can end the hint.
    monkeypatch.setattr(ctrl_c, "CLEARED_HINT_S", 60.0)
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        hints = app.query_one(HintRow)

        def hint_shown() -> bool:
            return CLEARED_HINT in str(hints.render())

        await type_text(pilot, "my draft")
        await pilot.press("ctrl+c")
        # The clear's own change (the box now empty) has been handled: the hint stays.
        await pilot.pause()
        await pilot.pause()
        assert app.prompt.text == "" and hint_shown()

        await pilot.press("up")
        assert app.prompt.text == "my draft"
        await wait_until(pilot, lambda: not hint_shown(), within=5.0, what="the hint to end")
        assert "Enter send" in str(hints.render())

        # Cleared again, then something new typed: the hint is over as well.
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert hint_shown()
        await pilot.press("x")
        await wait_until(pilot, lambda: not hint_shown(), within=5.0, what="the hint to end")
        assert app.prompt.text == "x"


@pytest.fixture
def ink_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    return env


def test_on_a_pty_ctrl_c_after_a_restore_clears_says_how_to_get_it_back_and_up_does(
    server: ScriptedServer, workspace: Path, ink_env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(text_reply("Thinking about it, slowly.", gate=gate))
    ink = PtyInk(["--base-url", server.base_url, "--model", "m"], cwd=workspace, env=ink_env)
    try:
        ink.wait_for("idle")
        ink.send(b"go\r")
        assert gate.reached.wait(10), "the request never reached the server"
        ink.send(b"the follow-up" + ALT_ENTER)
        ink.wait_for("Queued")
        before = ink.mark()
        ink.send(CTRL_C)
        ink.wait_for("Restored 1 queued input to the editor.", since=before)
        # The abort press came before that notice was drawn, so once this much time has
        # passed here the app's window for "a second press quits" (0.5 s) is surely over:
        # a lower bound, not a guess at how long the app takes.
        time.sleep(0.6)

        cleared = ink.mark()
        ink.send(CTRL_C)
        ink.wait_for(CLEARED_HINT, since=cleared)

        armed = ink.mark()
        ink.send(CTRL_C)
        ink.wait_for(QUIT_HINT, since=armed)
        assert ink.process.poll() is None

        back = ink.mark()
        ink.send(UP)
        ink.wait_for("the follow-up", since=back)
        assert ink.process.poll() is None
    finally:
        ink.close()
