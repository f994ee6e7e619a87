"""Background jobs in the app: the count in the status bar, /jobs, /jobs kill, /quit."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from ink_tui.assemble import assemble_controller
from ink_tui.control.bus import EventBus
from ink_tui.control.controller import RunController
from ink_tui.session.model_config import ModelConfig
from ink_tui.ui.app import InkApp
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript
from tests.process_markers import alive, kill_marked, new_marker, wait_alive
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.ui_helpers import type_text, wait_until

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")

SIZE = (120, 32)


def make_app(server: ScriptedServer, workspace: Path) -> InkApp:
    def make_controller(bus: EventBus) -> RunController:
        return assemble_controller(ModelConfig(server.base_url, "m"), workspace, bus=bus)

    return InkApp(make_controller, model_label="m @ loopback", is_demo=False, workspace=workspace)


def shown(app: InkApp) -> str:
    return app.query_one(Transcript).plain_text()


def status(app: InkApp) -> str:
    return str(app.query_one(StatusBar).render())


def job_count(app: InkApp) -> str | None:
    """ "2 jobs" as the status bar shows it; None when it shows no count."""
    found = re.search(r"\d+ jobs?\b", status(app))
    return found.group() if found else None


async def send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


async def test_status_bar_counts_jobs_and_jobs_lists_and_stops_them(
    server: ScriptedServer, workspace: Path
) -> None:
    prefix = new_marker()
    markers = [f"{prefix}1", f"{prefix}2"]
    command = f"setsid sleep {markers[0]} &\nbash -c 'sleep {markers[1]} &' &"
    server.push(tool_reply([("bash", {"command": command}, "call_serve")]), text_reply("Up."))
    app = make_app(server, workspace)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.controller is not None, what="controller")
            await send(pilot, "start two servers")
            await wait_until(pilot, lambda: job_count(app) == "2 jobs", what="the job count")
            await send(pilot, "/jobs")
            await wait_until(pilot, lambda: "Background jobs (2)" in shown(app), what="list")
            text = shown(app)
            for marker in markers:
                assert f"sleep {marker}" in text
            assert "from call_serve: setsid sleep" in text
            pids = alive(*markers)
            assert len(pids) == 2
            assert all(f"pid {pid}" in text for pid in pids)
            # One by pid: the count follows.
            await send(pilot, f"/jobs kill {pids[0]}")
            await wait_until(pilot, lambda: "Stopped 1 job" in shown(app), what="stopped")
            await wait_until(pilot, lambda: job_count(app) == "1 job", what="count of 1")
            assert alive(*markers) == pids[1:]
            # The rest, and the count goes away.
            await send(pilot, "/jobs kill")
            await wait_until(pilot, lambda: job_count(app) is None, what="no count")
            assert alive(*markers) == []
    finally:
        kill_marked(prefix)


async def test_a_mistyped_jobs_command_is_explained_and_given_back(
    server: ScriptedServer, workspace: Path
) -> None:
    app = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/jobs klil 3")
        assert "/jobs klil 3: /jobs lists them" in shown(app)
        assert app.prompt.text == "/jobs klil 3"
        app.prompt.clear_input()
        await send(pilot, "/jobs kill 999999999")
        # Nothing to stop, or (jobs of other tests still running) no such job.
        answers = ("No background jobs are running.", "There is no job 999999999")
        await wait_until(pilot, lambda: any(a in shown(app) for a in answers), what="answer")


async def test_quit_stops_what_commands_left_running(
    server: ScriptedServer, workspace: Path
) -> None:
    prefix = new_marker()
    marker = f"{prefix}1"
    server.push(
        tool_reply([("bash", {"command": f"nohup sleep {marker} >/dev/null 2>&1 &"})]),
        text_reply("Started."),
    )
    app = make_app(server, workspace)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.controller is not None, what="controller")
            await send(pilot, "go")
            await wait_until(pilot, lambda: job_count(app) == "1 job", what="the job count")
            await asyncio.to_thread(wait_alive, [marker])
            await send(pilot, "/quit")
        assert alive(marker) == []
    finally:
        kill_marked(prefix)
