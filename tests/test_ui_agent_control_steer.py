"""Steering one sub-agent from the TUI: its row's "✎ steer" points the input at it; Enter
sends the line to that sub-agent's next model call (not the parent's), Alt+Enter queues
it a follow-up, Esc points the input back; nothing typed is ever lost, not even when the
sub-agent ended meanwhile."""

from __future__ import annotations

from pathlib import Path

from ink_tui.ui.agent_requests import SteerAgentRequested
from ink_tui.ui.widgets.activity_panel import STEER_LABEL
from ink_tui.ui.widgets.prompt_input import steering_text
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply
from tests.test_ui_agent_control import (
    LINT,
    SCAN,
    SIZE,
    agent_rows,
    app_with_tasks,
    both_running,
    click_part,
    hint,
    requests_of,
    shows,
    two_tasks,
    waiting_bash,
)
from tests.test_ui_app import submit, transcript_text
from tests.ui_helpers import type_text, wait_until


def all_user_texts(requests: list[dict]) -> list[str]:
    return [text for request in requests for text in user_texts(request)]


async def test_steer_points_the_input_at_it_and_enter_reaches_its_next_request_only(
    server: ScriptedServer, workspace: Path
) -> None:
    two_tasks(
        server,
        [waiting_bash("go_scan"), text_reply("scan done")],
        [text_reply("lint is clean")],
        text_reply("Both reported."),
    )
    app, events = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        # (Lint may be done already: it has nothing to wait for.)
        await wait_until(
            pilot,
            lambda: SCAN in agent_rows(app) and agent_rows(app)[SCAN].doing.startswith("bash"),
            what="scan running its command",
        )
        await type_text(pilot, "also check utils")
        await click_part(pilot, app, SCAN, STEER_LABEL)
        prompt = app.prompt
        # Pointed at it: the border, the placeholder and the hints say so; the text stays.
        assert prompt.target == agent_rows(app)[SCAN].agent_id
        assert prompt.has_class("-steering") and prompt.border_title == f"Steering {SCAN}"
        assert prompt.placeholder == steering_text(SCAN)
        assert prompt.text == "also check utils" and prompt.has_focus
        shown = hint(app)
        assert f"Steering {SCAN}" in shown and "Enter sends to it" in shown
        assert "Esc back to the main agent" in shown
        await pilot.press("enter")
        await wait_until(pilot, lambda: f"Sent a steer to {SCAN}" in hint(app))
        # Back at the main agent, the box empty; nothing went to the parent's queue.
        assert prompt.target is None and not prompt.has_class("-steering")
        assert prompt.border_title is None and prompt.text == ""
        assert app.controller.queue.entries == []
        (workspace / "go_scan").touch()
        await app.controller.wait_idle()
        scan_requests = requests_of(server, "SCAN")
        assert len(scan_requests) == 2
        assert user_texts(scan_requests[1])[-1] == "also check utils"
        assert scan_requests[1]["messages"][-2]["role"] == "tool"
        others = [r for r in server.requests if r not in scan_requests]
        assert "also check utils" not in all_user_texts(others)
        assert "also check utils" not in transcript_text(app)
        await shows(pilot, app, "Both reported.")
        assert [e.stop_reason for e in events.of("subagent_end")] == ["completed"] * 2


async def test_alt_enter_queues_the_sub_agent_a_follow_up(
    server: ScriptedServer, workspace: Path
) -> None:
    scan_gate = Gate()
    two_tasks(
        server,
        [text_reply("first findings", gate=scan_gate), text_reply("and the rest")],
        [text_reply("lint is clean")],
        text_reply("Both reported."),
    )
    app, _ = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_gate(scan_gate)
        await wait_until(pilot, lambda: SCAN in agent_rows(app), what="scan's row")
        await click_part(pilot, app, SCAN, STEER_LABEL)
        await type_text(pilot, "then list the slow ones")
        await pilot.press("alt+enter")
        await wait_until(pilot, lambda: f"Sent a follow-up to {SCAN}" in hint(app))
        assert app.prompt.target is None
        scan_gate.open()
        await app.controller.wait_idle()
        first, second = requests_of(server, "SCAN")
        # A follow-up waits for the sub-agent's answer, then starts its next turn.
        assert "then list the slow ones" not in user_texts(first)
        assert second["messages"][-2]["content"] == "first findings"
        assert user_texts(second)[-1] == "then list the slow ones"
        (parent_next,) = requests_of(server, "go")[1:]
        assert "then list the slow ones" not in user_texts(parent_next)


async def test_a_sub_agent_that_ended_meanwhile_gives_the_text_back_and_enter_then_goes_to_main(
    server: ScriptedServer, workspace: Path
) -> None:
    lint_gate = Gate()
    two_tasks(
        server,
        [waiting_bash("go_scan"), text_reply("scan done")],
        [text_reply("lint is clean", gate=lint_gate)],
        text_reply("Took your note."),
    )
    app, events = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await both_running(pilot, app)
        await click_part(pilot, app, SCAN, STEER_LABEL)
        await type_text(pilot, "late words")
        (workspace / "go_scan").touch()
        await events.wait_for(lambda e: e.type == "subagent_end" and e.description == SCAN)
        await pilot.pause()
        prompt = app.prompt
        assert prompt.border_title == f"Steering {SCAN} · it has ended"
        await pilot.press("enter")
        await wait_until(pilot, lambda: f"{SCAN} has already ended" in hint(app))
        assert "Enter now sends it to the main agent" in hint(app)
        # Nothing was sent anywhere; the text is back, and the input points at main.
        assert prompt.text == "late words" and prompt.target is None
        assert app.controller.queue.entries == []
        assert "late words" not in all_user_texts(server.requests)
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.controller.queue.entries) == 1)
        assert app.controller.queue.entries[0].text == "late words"
        lint_gate.open()
        await app.controller.wait_idle()
        assert user_texts(requests_of(server, "go")[-1])[-1] == "late words"
        await shows(pilot, app, "Took your note.")


async def test_esc_points_the_input_back_at_main_and_keeps_the_text(
    server: ScriptedServer, workspace: Path
) -> None:
    two_tasks(
        server,
        [waiting_bash("go_scan"), text_reply("scan done")],
        [waiting_bash("go_lint"), text_reply("lint is clean")],
        text_reply("Both reported."),
    )
    app, _ = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await both_running(pilot, app)
        await type_text(pilot, "keep me")
        app.post_message(SteerAgentRequested(agent_rows(app)[LINT].agent_id, LINT))
        await wait_until(pilot, lambda: app.prompt.target is not None, what="pointed")
        assert f"Steering {LINT}" in hint(app)
        await pilot.press("escape")
        prompt = app.prompt
        assert prompt.target is None and prompt.text == "keep me"
        assert not prompt.has_class("-steering") and f"Steering {LINT}" not in hint(app)
        # That Esc only pointed the input back: the run goes on, not interrupted.
        assert app.controller.state == "running" and app.controller.interrupts == 0
        assert set(agent_rows(app)) == {SCAN, LINT}
        # Enter now steers the parent.
        await pilot.press("enter")
        assert [e.text for e in app.controller.queue.entries] == ["keep me"]
        (workspace / "go_scan").touch()
        (workspace / "go_lint").touch()
        await app.controller.wait_idle()
        for prompt_text in ("SCAN", "LINT"):
            assert "keep me" not in all_user_texts(requests_of(server, prompt_text))
        assert user_texts(requests_of(server, "go")[-1])[-1] == "keep me"


async def test_a_shell_line_is_not_sent_to_a_sub_agent_and_comes_back(
    server: ScriptedServer, workspace: Path
) -> None:
    two_tasks(
        server,
        [waiting_bash("go_scan"), text_reply("scan done")],
        [text_reply("lint is clean")],
        text_reply("Both reported."),
    )
    app, _ = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_until(pilot, lambda: SCAN in agent_rows(app), what="scan's row")
        await click_part(pilot, app, SCAN, STEER_LABEL)
        await type_text(pilot, "!ls")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "cannot be sent to a sub-agent" in hint(app))
        # Given back, still aimed at the sub-agent; nothing queued or run.
        assert app.prompt.text == "!ls" and app.prompt.target is not None
        assert app.controller.queue.entries == []
        (workspace / "go_scan").touch()
        await app.controller.wait_idle()
        assert "!ls" not in all_user_texts(server.requests)
