"""An interrupt storm through the real app: Ctrl+C at random points, input queued at random.

`test_interrupt_storm.py` storms the controller directly; this drives the Textual app
with the Pilot, so the keys, the prompt, the app's Ctrl+C handling and the restore into
the editor are in the loop too. Each run is interrupted with Ctrl+C while the provider
waits for the server to answer at all (headers held), mid stream, mid tool (a bash
`sleep` with a child) or mid retry wait (a 503 whose Retry-After asks for 30 s). Before
the press, lines are typed as terminal keys and queued (Enter = steer, Alt+Enter =
follow-up) at random moments, and sometimes a draft is left unsent. Half the runs first
pass through a tool call, so steers typed during it reach the model. After each settle:

- the input holds every queued entry the model did not receive, in order, joined by
  blank lines, above the draft; each queued text ends exactly once (input or request);
- no process a command started is alive (the marker in /proc);
- the run settled: aborted, one run_end per run_start, state idle, nothing queued.

After the storm the app answers a printable key within 100 ms (the worst of 20).
The seed is printed; INK_STORM_SEED=<n> replays a storm.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from textual._xterm_parser import XTermParser
from textual.pilot import Pilot

from ink_tui.control.controller import RunController
from ink_tui.core.events import RunEnd, RunStart, UserMessageEvent
from ink_tui.ui.app import InkApp
from tests.loop_heartbeat import CpuWait, ReferenceClock
from tests.run_helpers import Recorder, wait_gate
from tests.scripted_server import (
    Gate,
    ScriptedServer,
    error_reply,
    text_reply,
    tool_reply,
)
from tests.test_interrupt_storm import kill_all_with, processes_with
from tests.ui_helpers import make_app, wait_until

RUNS = 16
POINTS = ("first_byte", "mid_stream", "mid_tool", "mid_retry")
SIZE = (100, 32)
KEYS = "abcdefghijklmnopqrst"  # 20 printable keys for the latency probe
MAX_KEY_S = 0.1


def type_as_terminal(app: InkApp, text: str) -> None:
    """Post `text` as the key events a terminal's bytes become. Not `pilot.press`: after
    each key it waits for the process to look idle (about 60 ms a key here, up to a
    second on a busy machine), which would make the storm slow and the latency probe
    measure the Pilot instead of the app. `pilot.pause(0.01)` likewise, never `pause()`."""
    for event in XTermParser().feed(text):
        app.post_message(event)


async def key_latency(app: InkApp, key: str, reference: ReferenceClock) -> float:
    """Seconds from a printable key's arrival until the input holds it, less any time
    the whole process, or the loop's thread, was kept off the CPU meanwhile (a busy
    machine, not the app)."""
    want = app.prompt.text + key
    cpu_wait = CpuWait()
    waited_before = cpu_wait.total()
    started = time.monotonic()
    type_as_terminal(app, key)
    deadline = started + 1.0
    while app.prompt.text != want:
        if time.monotonic() > deadline:
            raise AssertionError(f"{key!r} never reached the input ({app.prompt.text!r})")
        await asyncio.sleep(0.001)
    ended = time.monotonic()
    waited = cpu_wait.total() - waited_before
    return ended - started - max(reference.stall(started, ended), waited)


@dataclass
class RunRecord:
    run: int
    point: str
    prelude: bool
    queued: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    draft: str = ""
    sent: int = 0  # queued entries the loop took and sent to the model


class AppStorm:
    def __init__(
        self, app: InkApp, pilot: Pilot, server: ScriptedServer, events: Recorder, seed: int
    ) -> None:
        self.app = app
        self.pilot = pilot
        self.server = server
        self.events = events
        self.rng = random.Random(seed)
        # Digits only: the marker rides in `sleep`'s argument (sleep 30.<marker>).
        self.token = f"{os.getpid() % 1000:03d}{self.rng.randrange(10**6):06d}"
        self.problems: list[str] = []

    @property
    def controller(self) -> RunController:
        assert self.app.controller is not None
        return self.app.controller

    async def type_keys(self, text: str) -> None:
        type_as_terminal(self.app, text)
        await wait_until(self.pilot, lambda: self.app.prompt.text.endswith(text), 2, text)

    def landed(self, text: str) -> bool:
        """Queued, or already taken by the loop into the history."""
        return any(e.text == text for e in self.controller.queue.entries) or any(
            isinstance(e, UserMessageEvent) and e.text == text for e in self.events.events
        )

    async def queue_some(self, record: RunRecord, stage: str, *, steer: bool = False) -> None:
        """Type and queue 0-3 lines; `steer` makes the first a plain steer."""
        for k in range(self.rng.choice([0, 0, 1, 2, 3]) if not steer else self.rng.choice([1, 2])):
            word = f"q{record.run}{stage}{k}"
            text = self.rng.choice([f"queued {word}", f"queued {word}", f"!echo {word}"])
            mode = self.rng.choice(["steer", "follow_up"])
            if steer and k == 0:
                text, mode = f"steer {word}", "steer"
            await self.type_keys(text)
            # Enter queues a steer, Alt+Enter (ESC CR from the terminal) a follow-up.
            type_as_terminal(self.app, "\r" if mode == "steer" else "\x1b\r")
            await wait_until(self.pilot, lambda t=text: self.landed(t), 2, f"{text} queued")
            record.queued.append(text)
            record.modes.append(mode)
            modes = [e.mode for e in self.controller.queue.entries if e.text == text]
            if modes not in ([], [mode]):
                self.problems.append(f"run {record.run}: {text!r} queued as {modes}, not {mode}")

    def push_reply(self, point: str, gate: Gate, marker: str) -> None:
        if point == "first_byte":
            # Accepted, and not a byte back, not even the status line.
            reply = text_reply("never shown")
            reply.before_headers = gate
            self.server.push(reply)
        elif point == "mid_stream":
            self.server.push(text_reply("a long answer that never ends", pieces=4, gate=gate))
        elif point == "mid_tool":
            command = f"sleep 30.{marker} & sleep 31.{marker}; wait"
            self.server.push(tool_reply([("bash", {"command": command})]))
        else:
            self.server.push(error_reply(503, "overloaded", headers={"Retry-After": "30"}))

    def retries(self) -> int:
        return len([e for e in self.events.of("notice") if e.kind == "retry"])

    async def reach(self, point: str, gate: Gate, marker: str, retries_before: int) -> None:
        if point in ("first_byte", "mid_stream"):
            await wait_gate(gate)
        elif point == "mid_tool":
            await wait_until(self.pilot, lambda: len(processes_with(marker)) >= 3, 5, "the sleeps")
        else:
            await wait_until(
                self.pilot, lambda: self.retries() > retries_before, 5, "the retry notice"
            )

    async def one_run(self, run: int, point: str, prelude: bool) -> RunRecord:
        record = RunRecord(run, point, prelude)
        marker = f"{self.token}{run:02d}"
        gate, first_call = Gate(), Gate()
        retries_before = self.retries()
        requests_before = len(self.server.requests)
        if prelude:
            # A first model call that asks for `ls`, held mid stream: steers typed now are
            # taken into the second call, so they reach the model instead of the editor.
            self.server.push(tool_reply([("ls", {})], gate=first_call))
        self.push_reply(point, gate, marker)

        await self.type_keys(f"task {run} at {point}")
        type_as_terminal(self.app, "\r")
        await wait_until(self.pilot, lambda: self.controller.state == "running", 2, "the run")
        if prelude:
            await wait_gate(first_call)
            await self.queue_some(record, "a", steer=True)
            first_call.open()
        else:
            await self.queue_some(record, "a")
        await self.reach(point, gate, marker, retries_before)
        await self.queue_some(record, "b")
        if self.rng.random() < 0.3:
            record.draft = f"draft {run}"
            await self.type_keys(record.draft)
        await asyncio.sleep(self.rng.uniform(0, 0.02))

        await self.pilot.press("ctrl+c")
        await asyncio.wait_for(self.controller.wait_idle(), 5)
        await self.pilot.pause(0.01)
        self.check(record, requests_before)
        if point == "mid_tool":
            try:
                await wait_until(self.pilot, lambda: not processes_with(marker), 1)
            except AssertionError:
                self.problems.append(f"run {run}: left running {processes_with(marker)}")
        # Checked: empty it for the next run. Not with Ctrl+C, which this soon after the
        # abort means "quit now".
        self.app.prompt.clear_input()
        await self.pilot.pause(0.01)
        return record

    def check(self, record: RunRecord, requests_before: int) -> None:
        where = f"run {record.run} ({record.point}{', after ls' if record.prelude else ''})"
        sent = {
            m["content"]
            for r in self.server.requests[requests_before:]
            for m in r["messages"]
            if m["role"] == "user"
        }
        back = [text for text in record.queued if text not in sent]
        record.sent = len(record.queued) - len(back)
        print(f"{where}: queued {len(record.queued)}, sent {record.sent}, draft {record.draft!r}")
        expected = "\n\n".join([*back, *([record.draft] if record.draft else [])])
        if self.app.prompt.text != expected:
            self.problems.append(f"{where}: input {self.app.prompt.text!r}, want {expected!r}")
        if self.controller.state != "idle" or len(self.controller.queue):
            self.problems.append(f"{where}: not settled, state {self.controller.state}")
        if self.server.pending:
            self.problems.append(f"{where}: a scripted reply was left unused")


async def test_ctrl_c_storm_in_the_app_loses_no_input_leaks_nothing_and_keys_stay_fast(
    server: ScriptedServer, workspace: Path
) -> None:
    seed = int(os.environ.get("INK_STORM_SEED") or random.randrange(2**32))
    where = f"(replay with INK_STORM_SEED={seed})"
    print(f"interrupt storm seed {seed}")
    app, events = make_app(server, workspace)
    token = ""
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.controller is not None, what="the controller")
            storm = AppStorm(app, pilot, server, events, seed)
            token = storm.token
            # Every point a fair share of the runs, in a random order.
            points = [POINTS[i % len(POINTS)] for i in range(RUNS)]
            preludes = [i % 2 == 0 for i in range(RUNS)]
            storm.rng.shuffle(points)
            storm.rng.shuffle(preludes)
            records = [
                await storm.one_run(run, point, prelude)
                for run, (point, prelude) in enumerate(zip(points, preludes, strict=True))
            ]
            leftovers = processes_with(token)

            # The app answers a key at once: the worst of 20 presses, until it shows.
            app.prompt.clear_input()
            await pilot.pause(0.01)
            worst = 0.0
            reference = ReferenceClock()
            reference.start()
            try:
                for key in KEYS:
                    worst = max(worst, await key_latency(app, key, reference))
                    await pilot.pause(0.01)
            finally:
                reference.stop()
            assert app.prompt.text == KEYS
            print(f"worst key: {worst * 1000:.1f} ms")
            state = app.controller.state if app.controller is not None else None
    finally:
        if token:
            kill_all_with(token)

    assert storm.problems == [], f"{where}: {storm.problems}"
    assert not leftovers, f"processes left running {where}: {leftovers}"
    assert state == "idle", where
    starts = [e for e in events.events if isinstance(e, RunStart)]
    ends = [e for e in events.events if isinstance(e, RunEnd)]
    assert len(starts) == len(ends) == RUNS, where
    assert [s.run_id for s in starts] == [e.run_id for e in ends], where
    assert [e.stop_reason for e in ends] == ["aborted"] * RUNS, where
    # Both fates happened: steers the loop took went to the model, the rest came back.
    assert {m for r in records for m in r.modes} == {"steer", "follow_up"}, where
    assert sum(r.sent for r in records) > 0, where
    assert sum(len(r.queued) - r.sent for r in records) > 0, where
    assert worst < MAX_KEY_S, f"a key took {worst * 1000:.0f} ms to show {where}"
