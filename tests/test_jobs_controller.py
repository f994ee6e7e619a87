"""Jobs through the controller as every front end assembles it: events on the bus, the
tool call each job came from, and the exit hook."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from ink_tui.assemble import assemble_controller
from ink_tui.core.events import JobsUpdate
from ink_tui.session.model_config import ModelConfig
from tests.process_markers import alive, kill_marked, new_marker, wait_alive
from tests.run_helpers import Recorder
from tests.scripted_server import ScriptedServer, text_reply, tool_reply

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")


def has(marker: str):
    def check(event: object) -> bool:
        return isinstance(event, JobsUpdate) and any(
            marker in job.argv.split() for job in event.jobs
        )

    return check


async def test_jobs_reach_the_bus_with_their_tool_call_and_go_when_they_end(
    server: ScriptedServer, workspace: Path
) -> None:
    prefix = new_marker()
    marker = f"{prefix}1"
    command = f"setsid sleep {marker} &"
    server.push(tool_reply([("bash", {"command": command}, "call_server_1")]), text_reply("ok"))
    controller = assemble_controller(ModelConfig(server.base_url, "m"), workspace)
    recorder = Recorder()
    controller.bus.subscribe(recorder)
    try:
        controller.submit("start a server")
        await controller.wait_idle()
        update = await recorder.wait_for(has(marker))
        [job] = [job for job in update.jobs if marker in job.argv.split()]
        assert job.call_id == "call_server_1"
        assert job.command == command
        # It ends on its own: the watcher notices within its poll and says so.
        os.kill(job.pid, signal.SIGKILL)
        await recorder.wait_for(
            lambda e: isinstance(e, JobsUpdate) and all(j.pid != job.pid for j in e.jobs), 5
        )
    finally:
        kill_marked(prefix)
        await controller.aclose()


async def test_exiting_the_controller_stops_the_jobs(
    server: ScriptedServer, workspace: Path
) -> None:
    prefix = new_marker()
    markers = [f"{prefix}1", f"{prefix}2"]
    command = f"nohup sleep {markers[0]} >/dev/null 2>&1 &\nsetsid sleep {markers[1]} &"
    server.push(tool_reply([("bash", {"command": command})]), text_reply("ok"))
    controller = assemble_controller(ModelConfig(server.base_url, "m"), workspace)
    try:
        controller.submit("go")
        await controller.wait_idle()
        await asyncio.to_thread(wait_alive, markers)
        # What /quit and a double Ctrl+C do (print mode then leaves through os._exit).
        controller.exit(0)
        assert alive(*markers) == []
    finally:
        kill_marked(prefix)
        await controller.aclose()


async def test_a_shell_line_job_is_listed_under_the_shell_call(workspace: Path) -> None:
    prefix = new_marker()
    marker = f"{prefix}1"
    controller = assemble_controller(ModelConfig("http://127.0.0.1:9/v1", "m"), workspace)
    recorder = Recorder()
    controller.bus.subscribe(recorder)
    try:
        controller.submit(f"!sleep {marker} &")
        await controller.wait_idle()
        update = await recorder.wait_for(has(marker))
        [job] = [job for job in update.jobs if marker in job.argv.split()]
        assert job.call_id == "shell-1"
    finally:
        kill_marked(prefix)
        controller.exit(0)
        await controller.aclose()
