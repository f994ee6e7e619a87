"""The whole app under the Pilot, against the loopback scripted server."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from textual._xterm_parser import XTermParser

from ink_tui.fastpaths import gc_policy
from ink_tui.fastpaths.textual_keys import install_alt_enter
from ink_tui.ui import clock
from ink_tui.ui.blocks.answer_block import AnswerBlock
from ink_tui.ui.blocks.tool_block import ToolBlock
from ink_tui.ui.widgets.queue_list import QueueList
from ink_tui.ui.widgets.queue_row import EntryEditor, EntryText
from ink_tui.ui.widgets.transcript import Transcript
from tests.fastpath_helpers import needs_fast_path
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import (
    Gate,
    ScriptedServer,
    error_reply,
    text_reply,
    tool_reply,
)
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (100, 32)


@contextmanager
def frozen_ui_clock() -> Iterator[Callable[[float], None]]:
    """The UI's clock stands still (it times the Ctrl+C windows), and moves only when
    told: a press "a moment later" is that much later however long the machine took."""
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


def transcript_text(app) -> str:
    transcript = app.query_one(Transcript)
    # Text still buffered for the next frame counts: a loaded machine may not have drawn
    # that frame when the controller is already idle (CI saw the answer missing).
    transcript.flush_now()
    return transcript.plain_text()


async def submit(pilot, text: str, key: str = "enter") -> None:
    await type_text(pilot, text)
    await pilot.press(key)
    await pilot.pause()


async def test_streaming_text_appears_before_the_answer_ends(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("First words arrive. Then the rest.", pieces=2, gate=gate))
    app, events = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hello")
        await wait_gate(gate)
        await wait_until(pilot, lambda: "First words" in transcript_text(app), what="first delta")
        assert not events.of("message_end")
        gate.open()
        await wait_until(pilot, lambda: "Then the rest." in transcript_text(app))
        await app.controller.wait_idle()


async def test_enter_while_a_tool_runs_reaches_the_next_request_as_a_steer(
    server: ScriptedServer, workspace: Path
) -> None:
    # The command runs until the test lets it finish: typing takes as long as it takes.
    server.push(
        tool_reply([("bash", {"command": "until [ -e go ]; do sleep 0.02; done; echo done"})]),
        text_reply("Steered."),
    )
    app, events = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "run it")
        await events.wait_for(lambda e: e.type == "tool_start")
        await submit(pilot, "use python instead")
        assert [e.text for e in app.controller.queue.entries] == ["use python instead"]
        (workspace / "go").touch()
        await app.controller.wait_idle()
        assert server.requests[1]["messages"][-1] == {
            "role": "user",
            "content": "use python instead",
        }
        assert server.requests[1]["messages"][-2]["role"] == "tool"
        assert "steer" in transcript_text(app)


@pytest.mark.parametrize("form", ["kitty", "esc-cr"])
async def test_alt_enter_queues_a_follow_up(
    server: ScriptedServer, workspace: Path, form: str
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("ls", {})], gate=gate),
        text_reply("Listed."),
        text_reply("Followed up."),
    )
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "look")
        await wait_gate(gate)
        await type_text(pilot, "then summarise")
        if form == "kitty":
            await pilot.press("alt+enter")
        else:
            install_alt_enter()
            for event in XTermParser().feed("\x1b\r"):
                app.post_message(event)
        await wait_until(pilot, lambda: len(app.controller.queue) == 1, what="queued entry")
        assert app.controller.queue.entries[0].mode == "follow_up"
        gate.open()
        await app.controller.wait_idle()
        assert "then summarise" not in user_texts(server.requests[1])
        assert user_texts(server.requests[2])[-1] == "then summarise"


async def _queue_three(pilot, app, server: ScriptedServer, gate: Gate) -> None:
    await submit(pilot, "start")
    await wait_gate(gate)
    await submit(pilot, "first steer")
    await submit(pilot, "second steer")
    await submit(pilot, "third as follow-up", "alt+enter")
    await wait_until(pilot, lambda: len(app.controller.queue) == 3)


def row_widgets(app):
    return list(app.query_one(QueueList).query("QueueRow"))


async def test_mouse_on_the_queue_changes_what_the_model_receives(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("working", gate=gate), text_reply("one"), text_reply("two"))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await _queue_three(pilot, app, server, gate)
        rows = row_widgets(app)
        # Delete the first steer, switch the second to a follow-up, edit it.
        await pilot.click(rows[0].query_one(".delete"))
        await wait_until(pilot, lambda: len(app.controller.queue) == 2)
        rows = row_widgets(app)
        await pilot.click(rows[0].query_one(".badge"))
        await wait_until(pilot, lambda: app.controller.queue.entries[0].mode == "follow_up")
        await pilot.click(rows[0].query_one(EntryText))
        await pilot.pause()
        editor = app.focused
        assert isinstance(editor, EntryEditor)
        editor.text = "second, edited"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.controller.queue.entries[0].text == "second, edited")
        # Move it below the other follow-up.
        rows = row_widgets(app)
        await pilot.click(rows[0].query_one(".down"))
        await wait_until(
            pilot,
            lambda: (
                [e.text for e in app.controller.queue.entries]
                == ["third as follow-up", "second, edited"]
            ),
        )
        gate.open()
        await app.controller.wait_idle()
        assert user_texts(server.requests[1])[-1] == "third as follow-up"
        assert user_texts(server.requests[2])[-1] == "second, edited"
        assert not any("first steer" in t for r in server.requests for t in user_texts(r))


async def test_alt_up_pulls_the_queue_into_the_editor(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("working", gate=gate))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await _queue_three(pilot, app, server, gate)
        await type_text(pilot, "my draft")
        await pilot.press("alt+up")
        await wait_until(pilot, lambda: len(app.controller.queue) == 0)
        assert app.prompt.text == ("first steer\n\nsecond steer\n\nthird as follow-up\n\nmy draft")
        assert app.controller.state == "running"
        gate.open()
        await app.controller.wait_idle()
        assert len(server.requests) == 1


async def test_ctrl_c_during_a_tool_kills_it_and_restores_the_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    pid_file = workspace / "pid"
    command = f"echo $$ > {pid_file}; (sleep 30) & sleep 30"
    server.push(tool_reply([("bash", {"command": command})]))
    app, events = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "run")
        await wait_until(pilot, lambda: pid_file.exists() and pid_file.read_text().strip() != "")
        await submit(pilot, "steer one")
        await submit(pilot, "follow one", "alt+enter")
        await pilot.press("ctrl+c")
        await app.controller.wait_idle()
        await pilot.pause()
        from ink_tui.tools.process_group import group_alive

        assert not group_alive(int(pid_file.read_text()))
        assert app.prompt.text == "steer one\n\nfollow one"
        assert "Restored 2 queued inputs to the editor." in transcript_text(app)
        assert events.of("run_end")[-1].stop_reason == "aborted"


async def test_failed_request_shows_the_error_and_restores_the_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("ls", {})], gate=gate), error_reply(400, "model overloaded: try later")
    )
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_gate(gate)
        # A follow-up stays queued past the tool batch, so the failure finds it there.
        await submit(pilot, "queued follow-up", "alt+enter")
        gate.open()
        await app.controller.wait_idle()
        await pilot.pause()
        assert "model overloaded: try later" in transcript_text(app)
        assert app.prompt.text == "queued follow-up"
        assert "Restored 1 queued input to the editor." in transcript_text(app)


async def test_double_ctrl_c_while_running_exits_130(
    server: ScriptedServer, workspace: Path
) -> None:
    # Once the command ignores SIGTERM, the abort's polite stop waits its grace: the
    # second press comes while the run still runs.
    ready = workspace / "ready"
    server.push(tool_reply([("bash", {"command": f"trap '' TERM; touch {ready}; sleep 20"})]))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_until(pilot, ready.exists, what="the command to ignore SIGTERM")
        with frozen_ui_clock():
            await pilot.press("ctrl+c")
            await pilot.press("ctrl+c")
            await pilot.pause()
    assert app.return_code == 130


async def test_second_ctrl_c_just_after_an_aborted_stream_settled_still_exits_130(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("streaming", gate=gate))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_gate(gate)
        await submit(pilot, "queued steer")
        with frozen_ui_clock() as moment_later:
            await pilot.press("ctrl+c")
            # The aborted stream settles at once and the steer comes back into the input;
            # the second press, a moment later, must quit rather than clear it.
            await app.controller.wait_idle()
            await pilot.pause()
            assert app.prompt.text == "queued steer"
            moment_later(0.3)
            await pilot.press("ctrl+c")
            await pilot.pause()
    assert app.return_code == 130


async def test_idle_ctrl_c_clears_then_warns_then_quits(
    server: ScriptedServer, workspace: Path
) -> None:
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "some draft")
        with frozen_ui_clock() as moment_later:
            await pilot.press("ctrl+c")
            assert app.prompt.text == ""
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert app.is_running
            moment_later(1.0)
            await pilot.press("ctrl+c")
            await pilot.pause()
    assert app.return_code == 0


async def test_idle_ctrl_c_copies_selected_transcript_text_and_keeps_the_draft(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No clipboard tool: the copy goes by OSC 52, which is what `app.clipboard` records
    # (with a tool: tests/test_copy_selection.py).
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    server.push(text_reply("Copy these words please."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "say something")
        await app.controller.wait_idle()
        await type_text(pilot, "my draft")
        await pilot.pause()
        transcript = app.query_one(Transcript)
        (answer,) = transcript.blocks_of(AnswerBlock)
        region = transcript.block_region(answer)
        assert region is not None
        left = region.x + 2  # the answer's own left padding
        last = left + len("Copy these words") - 1
        await pilot.mouse_down(transcript, offset=(left, region.y))
        await pilot.hover(transcript, offset=(last, region.y))
        await pilot.mouse_up(transcript, offset=(last, region.y))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "Copy these words"
        assert app.prompt.text == "my draft"
        assert app.screen.get_selected_text() is None
        # With nothing selected, Ctrl+C is back to clearing the editor.
        await pilot.press("ctrl+c")
        assert app.prompt.text == ""


async def test_folds_expand_and_collapse_one_by_one_and_all_at_once(
    server: ScriptedServer, workspace: Path
) -> None:
    for index in range(12):
        (workspace / f"file{index:02}.txt").write_text("x\n")
    server.push(
        tool_reply([("ls", {}), ("find", {"pattern": "*.txt"})]),
        text_reply("done"),
    )
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "list")
        await app.controller.wait_idle()
        await pilot.pause()
        transcript = app.query_one(Transcript)
        blocks = transcript.blocks_of(ToolBlock)
        assert len(blocks) == 2
        assert all(not b.expanded for b in blocks)
        assert "more lines" in transcript_text(app)
        region = transcript.block_region(blocks[0])
        assert region is not None
        await pilot.click(transcript, offset=region.offset)
        await pilot.pause()
        assert blocks[0].expanded and not blocks[1].expanded
        await pilot.press("ctrl+o")
        assert all(b.expanded for b in blocks)
        await pilot.press("ctrl+o")
        assert all(not b.expanded for b in blocks)
        app.prompt.focus()
        await pilot.press("tab")
        assert app.focused is transcript
        await pilot.press("up", "down", "enter")
        assert transcript.cursor is blocks[1]
        assert blocks[1].expanded


@needs_fast_path("gc_policy")
async def test_ink_freezes_its_start_up_heap_once_started_and_only_when_asked(
    server: ScriptedServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gc_policy, "_owned", False)
    before = gc.get_freeze_count()
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.controller is not None)
        await pilot.pause(0.1)
        assert gc.get_freeze_count() == before
    app, _ = make_app(server, workspace, freeze_startup_heap=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: gc.get_freeze_count() > before, what="the freeze")
    finally:
        # The test process runs many apps: give their objects back to the collector.
        gc.unfreeze()


async def test_input_sent_while_the_controller_is_still_being_imported_is_not_lost(
    server: ScriptedServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from ink_tui.ui import preload

    imported = threading.Event()
    real_import = preload.import_controller_modules

    def slow_import() -> None:
        imported.wait(10)  # held until the user has typed and sent
        real_import()

    monkeypatch.setattr(preload, "import_controller_modules", slow_import)
    server.push(text_reply("Got it."))
    app, _ = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "typed at once")
        assert app.controller is None
        imported.set()
        await wait_until(pilot, lambda: app.controller is not None, what="the controller")
        await app.controller.wait_idle()
        await pilot.pause()
        assert "Got it." in transcript_text(app)
    assert server.requests[0]["messages"][-1]["content"] == "typed at once"
