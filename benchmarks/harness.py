"""Running the real app in-process, with frames rendered like a terminal's and then dropped.

`SinkDriver` is Textual's headless driver with one change: it says it is not headless, so
the app renders every frame to terminal escape sequences exactly as for a real terminal
(the cost a user pays), and `write` receives them. It keeps no output; it only resolves
the futures of whoever waits for some text to reach the screen, or for the next frame.

Keys are injected the way a terminal driver's input thread does it
(`Driver.process_message` from another thread), so their latency includes the trip
through the app's message queue behind whatever the app is busy with.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.drivers.headless_driver import HeadlessDriver

if TYPE_CHECKING:
    from textual.app import App

    from ink_tui.control.bus import EventBus
    from ink_tui.control.controller import RunController
    from ink_tui.control.run_settings import RunSettings
    from ink_tui.ui.app import InkApp

SIZE = (100, 32)


_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]")


@dataclass
class _Watch:
    needle: str
    future: asyncio.Future[float]


class SinkDriver(HeadlessDriver):
    """Renders frames as for a terminal, then drops them (see the module doc)."""

    current: ClassVar[SinkDriver | None] = None

    def __init__(self, app: App[Any], **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.target = app
        self.frames = 0
        self.bytes_written = 0
        self._watches: list[_Watch] = []
        self._frame_waiters: list[asyncio.Future[float]] = []
        SinkDriver.current = self

    @property
    def is_headless(self) -> bool:
        return False

    def write(self, data: str) -> None:
        now = time.monotonic()
        self.frames += 1
        self.bytes_written += len(data)
        if self._frame_waiters:
            waiters, self._frame_waiters = self._frame_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(now)
        if self._watches:
            # A frame may split a line into styled runs or write only the cells that
            # changed; match on the text with the escape sequences taken out.
            plain = _ESCAPES.sub("", data)
            for watch in [w for w in self._watches if w.needle in plain]:
                self._watches.remove(watch)
                if not watch.future.done():
                    watch.future.set_result(now)

    def watch(self, needle: str) -> asyncio.Future[float]:
        """A future set to the time the first frame containing `needle` is written."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._watches.append(_Watch(needle, future))
        return future

    def next_frame(self) -> asyncio.Future[float]:
        """A future set to the time the next frame is written."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._frame_waiters.append(future)
        return future

    def press(self, key: str, character: str | None = None) -> float:
        """Send a key as the terminal driver's input thread would; returns the send time."""
        now = time.monotonic()
        self.process_message(events.Key(key, character))
        return now


def sink(app: App[Any]) -> SinkDriver:
    driver = SinkDriver.current
    if driver is None or driver.target is not app:
        raise RuntimeError("the app is not running on a SinkDriver")
    return driver


def make_ink_app(
    base_url: str,
    workspace: Path,
    settings: RunSettings | None = None,
    *,
    gather_s: float = 0.0,
) -> InkApp:
    """The app as `ink --base-url URL --model bench-model` builds it (`run_app`), with
    the run's `settings` when given (figure 12: eight sub-agents at once), and network
    reads gathered for `gather_s` as the terminal app gathers them (`frame_costs`)."""
    from ink_tui.assemble import assemble_controller
    from ink_tui.session.model_config import ModelConfig
    from ink_tui.ui.app import InkApp

    config = ModelConfig(base_url=base_url, model="bench-model")

    def make_controller(bus: EventBus) -> RunController:
        return assemble_controller(config, workspace, bus=bus, settings=settings, gather_s=gather_s)

    app = InkApp(
        make_controller,
        model_label="bench-model @ loopback",
        is_demo=False,
        workspace=workspace,
        # As `ink` runs it (see fastpaths/gc_policy.py); each figure runs in a process of its own.
        freeze_startup_heap=True,
    )
    app.driver_class = SinkDriver
    return app


@dataclass
class BusClock:
    """When run events of interest were published (first of each type, and every state)."""

    first: dict[str, float] = field(default_factory=dict)
    states: list[tuple[str, float]] = field(default_factory=list)
    waiters: list[tuple[Callable[[Any], bool], asyncio.Future[float]]] = field(default_factory=list)

    def __call__(self, event: Any) -> None:
        now = time.monotonic()
        self.first.setdefault(event.type, now)
        if event.type == "state":
            self.states.append((event.state, now))
        for waiter in [w for w in self.waiters if w[0](event)]:
            self.waiters.remove(waiter)
            if not waiter[1].done():
                waiter[1].set_result(now)

    def wait_for(self, predicate: Callable[[Any], bool]) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiters.append((predicate, future))
        return future

    def reset(self) -> None:
        self.first.clear()
        self.states.clear()


async def wait_for(predicate: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {within} s waiting for {what}")
        await asyncio.sleep(0.01)


async def start_ink(app: InkApp) -> BusClock:
    """Once the app runs: wait for its controller, listen to the bus."""
    await wait_for(lambda: app.controller is not None, 10, "the controller")
    clock = BusClock()
    app.bus.subscribe(clock)
    return clock


async def submit(app: InkApp, text: str) -> float:
    """Type `text` into the input box and press Enter; returns when Enter was sent."""
    app.prompt.insert(text)
    await asyncio.sleep(0.05)
    return sink(app).press("enter")
