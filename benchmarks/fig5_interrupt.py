"""Figure 5, interrupt: Ctrl+C during a stream and during a `bash` command, and to idle.

- Stream: the server streams the long answer at 32 KB/s (a fast model); 0.3 s after the
  first delta, Ctrl+C is sent as a terminal's input thread sends keys. `http_closed` runs
  to the moment the server sees the hang-up (its own clock, one clock on Linux); `idle`
  to the `state: idle` event on the bus.
- Bash: the model asks for `bash` running `sleep` with a child of its own (a subshell
  running `sleep`); once the whole process group is up, Ctrl+C. `group_gone` runs to
  the exit of the last member of the group (each watched through a pidfd, so no polling);
  `idle` as above.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Sample, median, run_child, write_json
from benchmarks.harness import SIZE, make_ink_app, sink, start_ink, submit, wait_for
from benchmarks.loopback import PGID_FILE, LoopbackServer, last_record

STREAM_SIZE = 200 * 1024
RATE = 32 * 1024
STREAM_FOR_S = 0.3
# bash, the subshell, its sleep and the foreground sleep.
GROUP_MEMBERS = 4
TIMEOUT_S = 10.0


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) pids whose process group is `pgid`, from /proc."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(name))
    return members


class ExitWatch:
    """Notes when the last of some processes has exited, from a thread, via pidfds."""

    def __init__(self, pids: list[int]) -> None:
        self._fds = [os.pidfd_open(pid) for pid in pids]
        self.last_exit: float | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        waiting = list(self._fds)
        deadline = time.monotonic() + TIMEOUT_S * 3
        while waiting and time.monotonic() < deadline:
            readable, _, _ = select.select(waiting, [], [], 1.0)
            now = time.monotonic()
            for fd in readable:
                waiting.remove(fd)
            if readable and not waiting:
                self.last_exit = now
        for fd in self._fds:
            os.close(fd)

    def join(self) -> float:
        self._thread.join(TIMEOUT_S * 3)
        if self.last_exit is None:
            raise RuntimeError("the process group was still alive")
        return self.last_exit


async def interrupt_stream(root: str, workspace: Path) -> Sample:
    app = make_ink_app(f"{root}/paced/{STREAM_SIZE}/{RATE}/v1", workspace)
    async with app.run_test(headless=False, size=SIZE):
        clock = await start_ink(app)
        streaming = clock.wait_for(lambda e: e.type == "text_delta")
        await submit(app, "Write the long answer.")
        await asyncio.wait_for(streaming, TIMEOUT_S)
        await asyncio.sleep(STREAM_FOR_S)
        idle = clock.wait_for(lambda e: e.type == "state" and e.state == "idle")
        pressed = sink(app).press("ctrl+c")
        idle_at = await asyncio.wait_for(idle, TIMEOUT_S)
    hangup = None
    deadline = time.monotonic() + 2
    while hangup is None and time.monotonic() < deadline:
        hangup = last_record(root, "hangup", "/paced/")
        await asyncio.sleep(0.05)
    if hangup is None:
        raise RuntimeError("the server never saw the client hang up")
    return {"http_closed_ms": (hangup["t"] - pressed) * 1000, "idle_ms": (idle_at - pressed) * 1000}


async def interrupt_bash(root: str, workspace: Path) -> Sample:
    app = make_ink_app(f"{root}/bash/v1", workspace)
    pgid_file = workspace / PGID_FILE
    async with app.run_test(headless=False, size=SIZE):
        clock = await start_ink(app)
        await submit(app, "Run the slow command.")
        await wait_for(
            lambda: pgid_file.exists() and pgid_file.read_text().endswith("\n"),
            TIMEOUT_S,
            "the command to start",
        )
        pgid = int(pgid_file.read_text())
        members: list[int] = []

        def group_up() -> bool:
            members[:] = group_members(pgid)
            return len(members) >= GROUP_MEMBERS

        await wait_for(group_up, TIMEOUT_S, "the whole process group")
        watch = ExitWatch(members)
        idle = clock.wait_for(lambda e: e.type == "state" and e.state == "idle")
        pressed = sink(app).press("ctrl+c")
        idle_at = await asyncio.wait_for(idle, TIMEOUT_S)
        gone_at = await asyncio.to_thread(watch.join)
    return {
        "group_gone_ms": (gone_at - pressed) * 1000,
        "idle_ms": (idle_at - pressed) * 1000,
        "members": len(members),
    }


async def measure_both(root: str) -> Sample:
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        stream = await interrupt_stream(root, Path(tmp))
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        bash = await interrupt_bash(root, Path(tmp))
    return {"stream": stream, "bash": bash}


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    with LoopbackServer((STREAM_SIZE,)) as server:
        return {"ink": [run_child("fig5_interrupt", ["--root", server.root]) for _ in range(runs)]}


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    return {
        "http_closed_ms": median([run["stream"]["http_closed_ms"] for run in runs]),
        "idle_after_stream_ms": median([run["stream"]["idle_ms"] for run in runs]),
        "group_gone_ms": median([run["bash"]["group_gone_ms"] for run in runs]),
        "idle_after_bash_ms": median([run["bash"]["idle_ms"] for run in runs]),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--root", required=True, help="the loopback server's root URL")
    args = parser.parse_args(argv)
    write_json(args.out, asyncio.run(measure_both(args.root)))


if __name__ == "__main__":
    main()
