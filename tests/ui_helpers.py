"""Helpers for driving the full app with the Pilot against the loopback server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from textual.pilot import Pilot

from ink_tui.control.bus import EventBus
from ink_tui.control.controller import RunController
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.stream_timeouts import StreamTimeouts
from ink_tui.core.tool_api import Tool
from ink_tui.providers.openai_compat import OpenAICompatProvider
from ink_tui.session.config import Config
from ink_tui.tools import default_tools
from ink_tui.ui.app import InkApp
from ink_tui.ui.startup import SessionPlan
from tests.run_helpers import Recorder
from tests.scripted_server import ScriptedServer


def make_app(
    server: ScriptedServer,
    workspace: Path,
    *,
    tools: Sequence[Tool] | None = None,
    settings: RunSettings | None = None,
    plan: SessionPlan | None = None,
    session_root: Path | None = None,
    config: Config | None = None,
    freeze_startup_heap: bool = False,
    timeouts: StreamTimeouts | None = None,
) -> tuple[InkApp, Recorder]:
    recorder = Recorder()

    def make_controller(bus: EventBus) -> RunController:
        bus.subscribe(recorder)
        provider = OpenAICompatProvider(
            server.base_url,
            "scripted-model",
            None,
            base_delay=0.01,
            max_delay=0.05,
            timeouts=timeouts,
        )
        return RunController(
            provider=provider,
            tools=default_tools() if tools is None else tools,
            workspace=workspace,
            system_prompt="You are a test.",
            settings=settings,
            bus=bus,
        )

    app = InkApp(
        make_controller,
        model_label="scripted-model @ loopback",
        is_demo=False,
        workspace=workspace,
        plan=plan,
        session_root=session_root,
        config=config,
        freeze_startup_heap=freeze_startup_heap,
    )
    return app, recorder


async def wait_until(
    pilot: Pilot, predicate: Callable[[], bool], within: float = 10.0, what: str = ""
) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        # A plain sleep, not pilot.pause: pause first waits for every widget to handle
        # a callback, and one removed meanwhile (a queue row taken back by an interrupt)
        # never does, so the wait hung for Textual's 30 s (CI, the interrupt storm). The
        # app runs in this loop: the sleep is its turn, and the predicate is the wait.
        await asyncio.sleep(0.02)


async def type_text(pilot: Pilot, text: str) -> None:
    app = pilot.app
    assert isinstance(app, InkApp)
    app.prompt.insert(text)
    await pilot.pause()
