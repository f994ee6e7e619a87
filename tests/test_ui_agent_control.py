"""Run control of one sub-agent in the TUI, through the whole app and the real controller
against the loopback server: the activity panel's rows follow each sub-agent's live
state; "■ stop" stops that one only and the parent goes on; Ctrl+C stops the tree.

The helpers here (a parent that starts two sub-agents, told apart by their prompts, and
the panel's rows as drawn) serve tests/test_ui_agent_control_*.py too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from ink_tui.control.agent_activity import AgentState
from ink_tui.tools import default_tools
from ink_tui.tools.task import TaskTool
from ink_tui.ui.agent_requests import SteerAgentRequested, StopAgentRequested
from ink_tui.ui.app import InkApp
from ink_tui.ui.widgets.activity_panel import STEER_LABEL, STOP_LABEL, ActivityPanel
from ink_tui.ui.widgets.hint_row import HintRow
from tests.run_helpers import Recorder, user_texts, wait_gate
from tests.scripted_server import Gate, Reply, ScriptedServer, text_reply, tool_reply
from tests.test_ui_app import submit, transcript_text
from tests.ui_helpers import make_app, type_text, wait_until

SIZE = (110, 32)
SCAN, LINT = "scan the tests", "lint the code"


def answer(server: ScriptedServer, prompt: str, *replies: Reply) -> None:
    """The sub-agent whose prompt is `prompt` gets `replies`, in order."""
    queue = list(replies)

    def respond(body: dict[str, Any]) -> Reply | None:
        texts = user_texts(body)
        return queue.pop(0) if texts and texts[0] == prompt and queue else None

    server.responders.append(respond)


def two_tasks(server: ScriptedServer, scan: list[Reply], lint: list[Reply], *after: Reply) -> None:
    """The parent asks for two tasks in one reply, then gets `after`."""
    answer(server, "SCAN", *scan)
    answer(server, "LINT", *lint)
    calls = [
        ("task", {"description": SCAN, "prompt": "SCAN"}, "call_scan"),
        ("task", {"description": LINT, "prompt": "LINT"}, "call_lint"),
    ]
    server.push(tool_reply(calls), *after)


def waiting_bash(flag: str) -> Reply:
    """A sub-agent's reply that runs a command until the test creates `flag`."""
    command = f"until [ -e {flag} ]; do sleep 0.02; done; echo ok"
    return tool_reply([("bash", {"command": command})])


def app_with_tasks(server: ScriptedServer, workspace: Path) -> tuple[InkApp, Recorder]:
    return make_app(server, workspace, tools=[*default_tools(), TaskTool()])


def requests_of(server: ScriptedServer, prompt: str) -> list[dict[str, Any]]:
    """The requests of the agent whose first user message is `prompt`."""
    return [r for r in server.requests if user_texts(r)[:1] == [prompt]]


def tool_results(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def panel(app: InkApp) -> ActivityPanel:
    return app.query_one(ActivityPanel)


def agent_rows(app: InkApp) -> dict[str, AgentState]:
    """The panel's sub-agent rows now, by description."""
    return {e.description: e for e in panel(app).entries() if isinstance(e, AgentState)}


def panel_lines(app: InkApp) -> list[str]:
    shown = panel(app)
    shown._paint()  # what the ticker would draw next
    return str(shown.content).splitlines()


async def shows(pilot: Pilot, app: InkApp, text: str) -> None:
    """The transcript shows `text` (it draws what arrived by frames)."""
    await wait_until(pilot, lambda: text in transcript_text(app), what=repr(text))


def hint(app: InkApp) -> str:
    return app.query_one(HintRow).render().plain


async def click_part(pilot: Pilot, app: InkApp, description: str, part: str) -> None:
    """Click `part` ("■ stop", "✎ steer") on the row of sub-agent `description`."""
    lines = panel_lines(app)
    (row,) = [i for i, line in enumerate(lines) if description in line]
    column = lines[row].index(part)
    # Below the panel's top border, after its one column of padding.
    assert await pilot.click(ActivityPanel, offset=(1 + column + 1, 1 + row))
    await pilot.pause()


async def both_running(pilot: Pilot, app: InkApp) -> None:
    await wait_until(pilot, lambda: set(agent_rows(app)) == {SCAN, LINT}, what="two rows")


# -- the panel's rows --------------------------------------------------------------


async def test_each_running_sub_agent_has_a_row_with_its_live_state_until_it_ends(
    server: ScriptedServer, workspace: Path
) -> None:
    lint_gate = Gate()
    two_tasks(
        server,
        [waiting_bash("go_scan"), text_reply("scan done")],
        [text_reply("lint is clean", gate=lint_gate)],
        text_reply("Both reported."),
    )
    app, events = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await both_running(pilot, app)
        await wait_until(
            pilot,
            lambda: (
                agent_rows(app)[SCAN].doing.startswith("bash until")
                and agent_rows(app)[LINT].doing == "writing"
            ),
            what="what each one does",
        )
        lines = panel_lines(app)
        for description, doing in ((SCAN, "bash until"), (LINT, "writing")):
            (line,) = [line for line in lines if description in line]
            assert doing in line and "tokens" in line
            assert line.rstrip().endswith(f"{STOP_LABEL}  {STEER_LABEL}")
        # The task calls are not rows of their own besides their sub-agents'.
        assert not [line for line in lines if "task " in line]
        (workspace / "go_scan").touch()
        await wait_until(pilot, lambda: set(agent_rows(app)) == {LINT}, what="scan's row gone")
        assert not [line for line in panel_lines(app) if SCAN in line]
        lint_gate.open()
        await app.controller.wait_idle()
        await wait_until(pilot, lambda: not panel(app).has_class("-active"))
        assert agent_rows(app) == {}
        await shows(pilot, app, "Both reported.")
        assert [e.stop_reason for e in events.of("subagent_end")] == ["completed"] * 2


async def test_on_a_small_terminal_the_rows_give_way_to_a_count_and_come_back(
    server: ScriptedServer, workspace: Path
) -> None:
    scan_gate, lint_gate = Gate(), Gate()
    two_tasks(
        server,
        [text_reply("scan done", gate=scan_gate)],
        [text_reply("lint is clean", gate=lint_gate)],
        text_reply("Both reported."),
    )
    app, _ = app_with_tasks(server, workspace)
    async with app.run_test(size=(60, 16)) as pilot:
        await submit(pilot, "go")
        await both_running(pilot, app)
        await wait_until(pilot, lambda: not panel(app).has_class("-compact"))
        assert len(panel_lines(app)) == 3
        # A draft of six lines leaves the transcript too few rows: the panel gives way.
        await type_text(pilot, "1\n2\n3\n4\n5\n6")
        await wait_until(pilot, lambda: panel(app).has_class("-compact"), what="compact")
        (line,) = panel_lines(app)
        assert line.endswith("· 2 sub-agents running")
        app.prompt.clear()
        await wait_until(pilot, lambda: not panel(app).has_class("-compact"), what="full")
        assert sum(STOP_LABEL in line for line in panel_lines(app)) == 2
        scan_gate.open()
        lint_gate.open()
        await app.controller.wait_idle()


# -- stop one ----------------------------------------------------------------------


async def test_clicking_stop_ends_that_sub_agent_only_and_the_parent_goes_on(
    server: ScriptedServer, workspace: Path
) -> None:
    scan_gate, lint_gate = Gate(), Gate()
    two_tasks(
        server,
        [text_reply("scanning forever", gate=scan_gate)],
        [text_reply("lint is clean", gate=lint_gate)],
        text_reply("Carried on without the scan."),
    )
    app, events = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await both_running(pilot, app)
        await wait_gate(scan_gate)
        await click_part(pilot, app, SCAN, STOP_LABEL)
        end = await events.wait_for(lambda e: e.type == "subagent_end")
        assert end.description == SCAN and end.stop_reason == "stopped"
        # Its stream was closed; the other one still runs, its row still there.
        assert await asyncio.to_thread(server.disconnected.wait, 10)
        assert server.disconnects == [server.requests.index(requests_of(server, "SCAN")[0])]
        await wait_until(pilot, lambda: f"Stopped {SCAN}" in hint(app), what="the hint")
        assert set(agent_rows(app)) == {LINT}
        assert app.controller.state == "running"
        lint_gate.open()
        await app.controller.wait_idle()
        await shows(pilot, app, "Carried on without the scan.")
        parent_next = requests_of(server, "go")[1]
        results = tool_results(parent_next)
        assert "Stopped by the user" in results["call_scan"]
        assert results["call_lint"] == "lint is clean"
        assert [e.stop_reason for e in events.of("subagent_end")] == ["stopped", "completed"]
        assert len(events.of("run_end")) == 1


async def test_stopping_one_that_has_ended_says_so_and_changes_nothing(
    server: ScriptedServer, workspace: Path
) -> None:
    lint_gate = Gate()
    two_tasks(
        server,
        [text_reply("scan done")],
        [text_reply("lint is clean", gate=lint_gate)],
        text_reply("Done."),
    )
    app, events = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        scan_end = await events.wait_for(
            lambda e: e.type == "subagent_end" and e.description == SCAN
        )
        # A row drawn a moment before the end (or a folded task row) asks for it.
        app.post_message(StopAgentRequested(scan_end.agent_id, SCAN))
        await wait_until(pilot, lambda: f"{SCAN} has already ended" in hint(app))
        assert app.controller.state == "running" and set(agent_rows(app)) == {LINT}
        # Nor is the input pointed at one that has ended.
        app.query_one(HintRow).flash("")  # the stop's message gone: the next is the steer's
        app.post_message(SteerAgentRequested(scan_end.agent_id, SCAN))
        await wait_until(pilot, lambda: f"{SCAN} has already ended" in hint(app))
        assert app.prompt.target is None and f"Steering {SCAN}" not in hint(app)
        lint_gate.open()
        await app.controller.wait_idle()
        assert [e.stop_reason for e in events.of("subagent_end")] == ["completed"] * 2
        await shows(pilot, app, "Done.")


# -- Ctrl+C stops the tree -----------------------------------------------------------


async def test_ctrl_c_stops_every_sub_agent_settles_once_and_restores_the_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    scan_gate = Gate()
    two_tasks(
        server,
        [text_reply("scanning forever", gate=scan_gate)],
        [waiting_bash("never_made")],
    )
    app, events = app_with_tasks(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await both_running(pilot, app)
        await wait_gate(scan_gate)
        await wait_until(pilot, lambda: agent_rows(app)[LINT].doing.startswith("bash"))
        await submit(pilot, "then tidy up")
        assert [e.text for e in app.controller.queue.entries] == ["then tidy up"]
        await pilot.press("ctrl+c")
        await app.controller.wait_idle()
        await pilot.pause()
        ends = events.of("subagent_end")
        assert sorted(e.description for e in ends) == [LINT, SCAN]
        assert {e.stop_reason for e in ends} == {"aborted"}
        index = events.events.index
        (run_end,) = events.of("run_end")
        assert all(index(end) < index(run_end) for end in ends)
        idles = [e for e in events.of("state") if e.state == "idle"]
        assert len(idles) == 1
        assert agent_rows(app) == {} and not panel(app).has_class("-active")
        assert app.prompt.text == "then tidy up"
        assert app.controller.subagents.running == {}
        # The scan's held stream was closed, and lint's command ended with the tree.
        scan_request = server.requests.index(requests_of(server, "SCAN")[0])
        assert await asyncio.to_thread(server.disconnected.wait, 10)
        assert scan_request in server.disconnects and len(server.requests) == 3
        lint_id = next(e.agent_id for e in ends if e.description == LINT)
        (bash_end,) = [e for e in events.of("tool_end") if e.agent_id == lint_id]
        assert index(bash_end) < index(run_end)
