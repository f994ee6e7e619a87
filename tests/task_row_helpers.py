"""What the task row tests share: a host app with the transcript fed by a real controller
(against the loopback server), and a read tool held until the test lets it go."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input

from ink_tui.control.controller import RunController
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.tool_api import ToolContext, ToolResult
from ink_tui.tools import default_tools
from ink_tui.tools.read import ReadTool
from ink_tui.tools.task import TaskTool
from ink_tui.ui.agent_requests import SteerAgentRequested, StopAgentRequested
from ink_tui.ui.blocks.task_block import TaskBlock
from ink_tui.ui.widgets.transcript import Transcript
from tests.run_helpers import Recorder, make_controller
from tests.scripted_server import Reply, ScriptedServer, chunk, tool_reply
from tests.ui_helpers import wait_until

STEER_TEXT = "look at the tests too"


class GatedRead(ReadTool):
    """The real read tool, held until `release` is set."""

    def __init__(self, release: asyncio.Event) -> None:
        super().__init__()
        self.release = release

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await self.release.wait()
        return await super().execute(args, ctx)


class Host(App[None]):
    """An input (focused first, as the app's) and the transcript on the controller's bus.
    The requests the rows post are recorded and carried out as the app would."""

    def __init__(self, controller: RunController) -> None:
        super().__init__()
        self.controller = controller
        self.requests: list[tuple[str, str, str]] = []

    def compose(self) -> ComposeResult:
        yield Input(id="typed")
        yield Transcript(self.controller.bus)

    def on_stop_agent_requested(self, message: StopAgentRequested) -> None:
        self.requests.append(("stop", message.agent_id, message.description))
        self.controller.abort_agent(message.agent_id)

    def on_steer_agent_requested(self, message: SteerAgentRequested) -> None:
        self.requests.append(("steer", message.agent_id, message.description))
        self.controller.steer(STEER_TEXT, agent_id=message.agent_id)


def answer(server: ScriptedServer, prompt: str, *replies: Reply) -> None:
    """`replies`, in turn, to the requests whose first user message is `prompt` (a
    sub-agent's: its prompt is its first message)."""
    queue = list(replies)

    def respond(body: dict[str, Any]) -> Reply | None:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        return queue.pop(0) if users and users[0] == prompt and queue else None

    server.responders.append(respond)


def tasks(*pairs: tuple[str, str]) -> Reply:
    """One reply of `task` calls: (description, prompt) each, ids call_1, call_2, ..."""
    calls = [
        ("task", {"description": d, "prompt": p}, f"call_{n}")
        for n, (d, p) in enumerate(pairs, start=1)
    ]
    return tool_reply(calls)


def thinking_reply(thinking: str, calls: Reply) -> Reply:
    """`calls` (a reply of tool calls) with reasoning before them."""
    steps = list(calls.steps)
    steps.insert(1, chunk({"reasoning_content": thinking}))
    return Reply(steps)


def controller_for(
    server: ScriptedServer,
    workspace: Path,
    *,
    release: asyncio.Event | None = None,
    settings: RunSettings | None = None,
) -> tuple[RunController, Recorder]:
    tools = [t for t in default_tools() if t.name != "read"]
    read = GatedRead(release) if release is not None else ReadTool()
    return make_controller(server, workspace, tools=[read, *tools, TaskTool()], settings=settings)


def transcript_of(pilot: Pilot[None]) -> Transcript:
    return pilot.app.query_one(Transcript)


def rows(transcript: Transcript) -> list[TaskBlock]:
    return transcript.blocks_of(TaskBlock)


def state_line(transcript: Transcript, row: TaskBlock) -> str:
    lines = transcript.block_lines(row)
    return lines[0].text.strip() if lines else ""


def drawn(transcript: Transcript, row: TaskBlock) -> str:
    return "\n".join(line.text.rstrip() for line in transcript.block_lines(row))


async def until_line(
    pilot: Pilot[None], transcript: Transcript, row: TaskBlock, *parts: str
) -> str:
    """Wait until the row's state line holds every one of `parts`; the line."""
    await wait_until(
        pilot,
        lambda: all(part in state_line(transcript, row) for part in parts),
        what=f"{parts} on the row (now {state_line(transcript, row)!r})",
    )
    return state_line(transcript, row)
