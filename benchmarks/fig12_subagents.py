"""Figure 12, sub-agents: typing while 8 sub-agents stream at once, and Ctrl+C of the tree.

Both drive the real app in-process, as figures 3 and 5 do (frames rendered as for a
terminal, then dropped; keys sent the way a terminal driver's input thread sends them),
against `benchmarks.agents_server`, with `subagents.max_parallel` at 8 so that all eight
`task` calls of the model's reply run at once.

- Keys: each of the 8 sub-agents streams text at 4 KB/s in 4-character deltas (a write
  every 10 ms: some 1,000 tokens a second each), 32 KB/s in all: figure 3's stream,
  spread over eight sub-agents. Once every one of
  them has streamed (a text delta with its agent id on the bus), a thread presses
  `PRESSES` keys, one every 50 ms, each timed from the send to its edit of the input box
  (figure 3's `KeyTimer`); no sub-agent may end before the last press (checked). The
  baseline: the same presses in the same app before the prompt, nothing running.
  Targets as figure 3's: p99 <= 16.7 ms (one frame at 60 Hz), max <= 50 ms. Then Ctrl+C.
- Ctrl+C of the tree: 8 `task` calls again; sub-agents 1-4 each run a `bash` command
  that sleeps with a child of its own (4 processes a group, as figure 5's), sub-agents
  5-8 stream text (as long as the run lasts). Once the four streams have sent text and
  the four groups are up, Ctrl+C, timed from the press to: every sub-agent ended (the
  8th `subagent_end` on the bus), every stream closed (the server's last `hangup` of
  the four), every process gone (the last exit of the 16, watched through pidfds), the
  run settled (`state: idle` on the bus); and the tree settled, the latest of the four.
  Targets: streams closed <= 50 ms and processes gone <= 100 ms (figure 5's for one
  agent, held for the tree), and the tree settled, `abort_tree_ms`, <= 100 ms (issue
  24's; figure 5 gives one agent 150 ms to idle).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.agents_server import AgentsServer, agents_url, pgid_file
from benchmarks.common import Sample, median, run_child, write_json
from benchmarks.fig3_key_latency import PRESS_INTERVAL_S, KeyTimer, key_stats
from benchmarks.fig5_interrupt import GROUP_MEMBERS, ExitWatch, group_members
from benchmarks.harness import SIZE, BusClock, make_ink_app, sink, start_ink, submit, wait_for
from benchmarks.loopback import fetch_log
from ink_tui.control.run_settings import RunSettings

AGENTS = 8
COMMANDS = 4  # the tree's sub-agents 1-4 run a bash command; the others stream
PRESSES = 120
QUICK_PRESSES = 10
# Longer than any run here: every stream is still going when Ctrl+C ends it.
STREAM_S = 120.0
TIMEOUT_S = 30.0


def _settings() -> RunSettings:
    return RunSettings(subagents_max_parallel=AGENTS)


def _streaming(clock: BusClock, count: int) -> asyncio.Future[float]:
    """Set once `count` sub-agents have streamed text."""
    agents: set[str] = set()

    def seen(event: Any) -> bool:
        if event.type == "text_delta" and event.agent_id is not None:
            agents.add(event.agent_id)
        return len(agents) >= count

    return clock.wait_for(seen)


def _nth(clock: BusClock, kind: str, count: int) -> asyncio.Future[float]:
    """Set at the `count`-th event of type `kind`."""
    seen = 0

    def nth(event: Any) -> bool:
        nonlocal seen
        seen += event.type == kind
        return seen >= count

    return clock.wait_for(nth)


def _idle(clock: BusClock) -> asyncio.Future[float]:
    return clock.wait_for(lambda e: e.type == "state" and e.state == "idle")


async def typing(root: str, workspace: Path, presses: int) -> Sample:
    app = make_ink_app(agents_url(root, AGENTS, STREAM_S, 0), workspace, _settings())
    keys = KeyTimer(app, PRESS_INTERVAL_S)
    async with app.run_test(headless=False, size=SIZE, message_hook=keys.on_message):
        clock = await start_ink(app)
        # Baseline: the same presses with no sub-agents (nothing running at all).
        keys.start(limit=presses)
        await asyncio.sleep(presses * PRESS_INTERVAL_S + 0.1)
        keys.stop()
        await keys.settle()
        idle = keys.latencies_ms()
        app.prompt.clear()
        await asyncio.sleep(0.1)

        streaming = _streaming(clock, AGENTS)
        first_end = clock.wait_for(lambda e: e.type == "subagent_end")
        await submit(app, "Start the sub-agents.")
        await asyncio.wait_for(streaming, TIMEOUT_S)
        keys.start(limit=presses)
        await asyncio.sleep(presses * PRESS_INTERVAL_S + 0.1)
        keys.stop()
        await keys.settle()
        if first_end.done():
            raise RuntimeError("a sub-agent ended before the last key: not 8 streaming")
        busy = keys.latencies_ms()
        settled = _idle(clock)
        sink(app).press("ctrl+c")
        await asyncio.wait_for(settled, TIMEOUT_S)
    return {"streaming": key_stats(busy), "idle": key_stats(idle)}


async def tree_interrupt(root: str, workspace: Path) -> Sample:
    app = make_ink_app(agents_url(root, AGENTS, STREAM_S, COMMANDS), workspace, _settings())
    async with app.run_test(headless=False, size=SIZE):
        clock = await start_ink(app)
        streaming = _streaming(clock, AGENTS - COMMANDS)
        await submit(app, "Start the sub-agents.")
        await asyncio.wait_for(streaming, TIMEOUT_S)
        members: list[int] = []

        def groups_up() -> bool:
            members.clear()
            for agent in range(1, COMMANDS + 1):
                path = workspace / pgid_file(agent)
                if not (path.exists() and path.read_text().endswith("\n")):
                    return False
                group = group_members(int(path.read_text()))
                if len(group) < GROUP_MEMBERS:
                    return False
                members.extend(group)
            return True

        await wait_for(groups_up, TIMEOUT_S, "every sub-agent's process group")
        watch = ExitWatch(members)
        ended = _nth(clock, "subagent_end", AGENTS)
        settled = _idle(clock)
        pressed = sink(app).press("ctrl+c")
        settled_at = await asyncio.wait_for(settled, TIMEOUT_S)
        ended_at = await asyncio.wait_for(ended, TIMEOUT_S)
        gone_at = await asyncio.to_thread(watch.join)
    closed_at = await _streams_closed(root, pressed, AGENTS - COMMANDS)
    times = {
        "ended_ms": ended_at,
        "streams_closed_ms": closed_at,
        "processes_gone_ms": gone_at,
        "settled_ms": settled_at,
    }
    sample: Sample = {key: (at - pressed) * 1000 for key, at in times.items()}
    sample["abort_tree_ms"] = max(sample.values())
    sample["processes"] = len(members)
    return sample


async def _streams_closed(root: str, pressed: float, streams: int) -> float:
    """When the server saw the last of `streams` sub-agent streams hang up after `pressed`."""
    deadline = time.monotonic() + 5
    while True:
        hangups = [
            r["t"]
            for r in await asyncio.to_thread(fetch_log, root)
            if r["kind"] == "hangup" and r.get("agent") and r["t"] >= pressed
        ]
        if len(hangups) >= streams:
            return max(hangups)
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server saw {len(hangups)} of {streams} streams hang up")
        await asyncio.sleep(0.05)


async def measure_both(root: str, presses: int) -> Sample:
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        keys = await typing(root, Path(tmp), presses)
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        tree = await tree_interrupt(root, Path(tmp))
    return {"keys": keys, "tree": tree}


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    presses = QUICK_PRESSES if quick else PRESSES
    with AgentsServer() as server:
        args = ["--root", server.root, "--presses", str(presses)]
        return {"ink": [run_child("fig12_subagents", args) for _ in range(runs)]}


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    summary: dict[str, float] = {"agents": AGENTS, "commands": COMMANDS}
    # The keys issue 24 names: `key_p99_ms` (figure 3's `p99_ms`), `abort_tree_ms`.
    for key in ("p50_ms", "p99_ms", "max_ms", "presses"):
        summary[f"key_{key}"] = median([run["keys"]["streaming"][key] for run in runs])
        summary[f"idle_key_{key}"] = median([run["keys"]["idle"][key] for run in runs])
    tree = ("ended_ms", "streams_closed_ms", "processes_gone_ms", "settled_ms", "abort_tree_ms")
    for key in tree:
        summary[key] = median([run["tree"][key] for run in runs])
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--root", required=True, help="the sub-agents server's root URL")
    parser.add_argument("--presses", type=int, default=PRESSES)
    args = parser.parse_args(argv)
    write_json(args.out, asyncio.run(measure_both(args.root, args.presses)))


if __name__ == "__main__":
    main()
