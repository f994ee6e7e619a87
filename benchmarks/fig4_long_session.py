"""Figure 4, long session: a transcript of 10 and one of 20,000 messages, side by side.

The transcript is built the way a resumed session rebuilds it, through the `Transcript`
methods the run events call. Messages come in units of five: the user's prompt, an
answer (prose, a list, a code block), a `bash` call, its 200-line result (one tool fold)
and a short answer; 20,000 messages hold 4,000 tool folds. Each size is an app in a
process of its own (`--serve SIZE`), and once everything is drawn:

- RSS of the process (after a garbage collection);
- append: `append_answer` + `end_answer` of one more short answer, to the frame that shows
  its last word (median of several);
- scroll: one page up or down (alternating, so it never hits the top), to the next frame
  written (median of several).

The two processes take turns, a few appends or scrolls at a time, the other
one idle meanwhile: this machine is shared, and for seconds at a time the same code
runs up to 1.6 times slower (a plain Python loop shows it too, in CPU time). Measured one
size after the other, such a stretch fell on one size's samples only and moved a run's
ratio anywhere from 0.7 to 1.6x; taking turns, it falls on both alike.

The ratios (20,000 vs 10) are per run, then the median over runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import (
    REPO_ROOT,
    ChildFailed,
    Sample,
    child_env,
    isolated_home,
    median,
    rss_mib,
)
from benchmarks.harness import SIZE, make_ink_app, sink, start_ink

FULL_SIZES = (10, 20000)
QUICK_SIZES = (10, 50)
MESSAGES_PER_UNIT = 5
FOLD_LINES = 200
# Appends and scrolls per size, taken in turns: 9 and 60 in all. A turn of scrolls is
# about half a second; an even count, so each turn ends where it began.
APPEND_TURNS = 3
APPENDS_PER_TURN = 3
SCROLL_TURNS = 6
SCROLLS_PER_TURN = 10
BATCH_UNITS = 25
TIMEOUT_S = 30.0
SETTLE_TIMEOUT_S = 600.0
QUICK_FRAME_S = 0.1


def _answer(i: int) -> str:
    return (
        f"I'll look at `module_{i}.py` first. The failing test expects the cache to keep "
        "the last results by key, but the size limit is checked after the insert, so "
        "one entry too many survives.\n\n"
        "- Move the size check before the insert.\n"
        "- Keep the order of eviction: the oldest key goes first.\n"
        "- Add a test for a cache of size one.\n\n"
        "```python\n"
        "def put(self, key: str, value: str) -> None:\n"
        "    if len(self.items) >= self.size:\n"
        "        self.items.pop(next(iter(self.items)))\n"
        "    self.items[key] = value\n"
        "```"
    )


def _tool_output(i: int) -> str:
    lines = [
        f"tests/test_module_{i}.py::test_case_{k:03d} PASSED{' ' * 20}[{k * 100 // FOLD_LINES:3d}%]"
        for k in range(1, FOLD_LINES)
    ]
    lines.append(f"{FOLD_LINES - 1} passed in 0.{i % 10}4s")
    return "\n".join(lines)


def add_units(transcript: Any, start: int, count: int) -> None:
    from ink_tui.core.messages import ToolCall
    from ink_tui.core.tool_api import ToolResult

    for i in range(start, start + count):
        transcript.add_user(f"Please fix the failing test in module_{i}.py and run the suite.")
        transcript.append_answer(_answer(i))
        transcript.end_answer()
        call = ToolCall(
            id=f"call_{i}", name="bash", arguments={"command": f"pytest tests/test_module_{i}.py"}
        )
        transcript.add_tool(call)
        transcript.tool_finished(call.id, ToolResult(content=_tool_output(i)), 1.25)
        transcript.append_answer(f"All tests in `module_{i}.py` pass now; the fix is one line.")
        transcript.end_answer()


async def _settle(app: Any) -> None:
    """Until everything is drawn: every block measured, the text steady, a frame quick.

    Each round asks for a repaint and waits for the frame, so the layout of everything
    mounted so far (which Textual defers to the next frame) is part of the build.
    """
    from ink_tui.ui.widgets.transcript import Transcript

    transcript = app.query_one(Transcript)
    driver = sink(app)
    last = -1
    while True:
        frame = driver.next_frame()
        started = time.monotonic()
        transcript.refresh()
        await asyncio.wait_for(frame, SETTLE_TIMEOUT_S)
        quick = time.monotonic() - started < QUICK_FRAME_S
        if transcript.reflowing:
            # Not done yet whatever the text says; the text of 20,000 messages takes a
            # while to gather, and gathering it each round would slow the build it waits for.
            last = -1
        else:
            size = len(transcript.plain_text())
            if size == last and quick:
                return
            last = size
        await asyncio.sleep(0.05)


async def _appends(app: Any, tag: str, count: int) -> list[float]:
    from ink_tui.ui.widgets.transcript import Transcript

    transcript = app.query_one(Transcript)
    driver = sink(app)
    times: list[float] = []
    # The user is at the bottom, following: otherwise (after scrolling) the new answer is
    # drawn off screen and never shows.
    transcript.follow()
    await asyncio.sleep(0.05)
    for n in range(count):
        marker = f"APPENDED{tag}N{n}END"
        shown = driver.watch(marker)
        started = time.monotonic()
        transcript.append_answer(
            "One more answer arrives.\n\n- It has a short list.\n- And a last line.\n\n"
            f"Last word: {marker}"
        )
        transcript.end_answer()
        times.append((await asyncio.wait_for(shown, TIMEOUT_S) - started) * 1000)
        await asyncio.sleep(0.05)
    return times


async def _scrolls(app: Any, count: int) -> list[float]:
    from ink_tui.ui.widgets.transcript import Transcript

    transcript = app.query_one(Transcript)
    driver = sink(app)
    times: list[float] = []
    for n in range(count):
        frame = driver.next_frame()
        started = time.monotonic()
        if n % 2 == 0:
            transcript.scroll_page_up(animate=False)
        else:
            transcript.scroll_page_down(animate=False)
        times.append((await asyncio.wait_for(frame, TIMEOUT_S) - started) * 1000)
        await asyncio.sleep(0.05)
    return times


def _reply(data: dict[str, Any]) -> None:
    # Straight to the pipe: the app redirects `sys.stdout` while it runs.
    os.write(1, (json.dumps(data) + "\n").encode())


async def serve_size(messages: int) -> None:
    """Build `messages`, report, then run the parent's commands until `quit`.

    Commands, one a line on stdin: `append N TAG` and `scroll N`, each answered with one
    JSON line of times (ms) on stdout.
    """
    from ink_tui.ui.widgets.transcript import Transcript

    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        app = make_ink_app("http://127.0.0.1:9/v1", Path(tmp))
        async with app.run_test(headless=False, size=SIZE):
            await start_ink(app)
            app.prompt.cursor_blink = False
            transcript = app.query_one(Transcript)
            target = max(1, messages // MESSAGES_PER_UNIT)
            started = time.monotonic()
            units = 0
            while units < target:
                count = min(BATCH_UNITS, target - units)
                add_units(transcript, units, count)
                units += count
                await asyncio.sleep(0)
            await _settle(app)
            build_s = time.monotonic() - started
            gc.collect()
            _reply(
                {
                    "messages": units * MESSAGES_PER_UNIT,
                    "folds": units,
                    "build_s": build_s,
                    "rss_mib": rss_mib(),
                    "widgets": len(list(app.query("*"))),
                }
            )
            while True:
                command = (await loop.run_in_executor(None, sys.stdin.readline)).split()
                if not command or command[0] == "quit":
                    break
                if command[0] == "append":
                    _reply({"times": await _appends(app, command[2], int(command[1]))})
                elif command[0] == "scroll":
                    _reply({"times": await _scrolls(app, int(command[1]))})
                else:
                    raise ValueError(f"unknown command {command!r}")


class _SizeProcess:
    """One size's app, in a process of its own, driven a command at a time."""

    def __init__(self, messages: int, tmp: Path) -> None:
        self._log = (tmp / f"stderr-{messages}.txt").open("w")
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.fig4_long_session", "--serve", str(messages)],
            cwd=REPO_ROOT,
            env=child_env(**isolated_home(tmp / f"home-{messages}")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )

    def read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait(timeout=30)
            self._log.flush()
            log = Path(self._log.name).read_text()[-4000:]
            raise ChildFailed(f"fig4 --serve exited with {self._proc.returncode}:\n{log}")
        return dict(json.loads(line))

    def ask(self, command: str) -> list[float]:
        assert self._proc.stdin is not None
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        return list(self.read()["times"])

    def close(self) -> None:
        if self._proc.poll() is None and self._proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self._proc.stdin.write("quit\n")
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._log.close()


def measure_run(sizes: tuple[int, ...]) -> Sample:
    """One run: every size built in its own process, then appends and scrolls by turns."""
    result: Sample = {}
    with tempfile.TemporaryDirectory(prefix="ink-bench-fig4-") as tmp:
        procs: dict[int, _SizeProcess] = {}
        try:
            for size in sizes:
                procs[size] = _SizeProcess(size, Path(tmp))
            # Built one at a time would be fairer to the clock, but the build is not
            # timed against anything: they build at once, then all the timing is by turns.
            for size, proc in procs.items():
                result[str(size)] = proc.read()
            appends: dict[int, list[float]] = {size: [] for size in sizes}
            scrolls: dict[int, list[float]] = {size: [] for size in sizes}
            for turn in range(APPEND_TURNS):
                for size, proc in procs.items():
                    appends[size] += proc.ask(f"append {APPENDS_PER_TURN} {size}T{turn}")
            for _turn in range(SCROLL_TURNS):
                for size, proc in procs.items():
                    scrolls[size] += proc.ask(f"scroll {SCROLLS_PER_TURN}")
        finally:
            for proc in procs.values():
                proc.close()
    for size in sizes:
        result[str(size)].update(
            append_ms=median(appends[size]),
            scroll_ms=median(scrolls[size]),
            appends_ms=appends[size],
            scrolls_ms=scrolls[size],
        )
    return result


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    sizes = QUICK_SIZES if quick else FULL_SIZES
    return {"ink": [measure_run(sizes) for _ in range(runs)]}


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    small, large = sorted(runs[0], key=int)[0], sorted(runs[0], key=int)[-1]
    summary: dict[str, float] = {"small": int(small), "large": int(large)}
    for key in ("rss_mib", "append_ms", "scroll_ms", "build_s", "widgets"):
        summary[f"{key}_small"] = median([run[small][key] for run in runs])
        summary[f"{key}_large"] = median([run[large][key] for run in runs])
    for key in ("append_ms", "scroll_ms"):
        summary[f"{key}_ratio"] = median([run[large][key] / run[small][key] for run in runs])
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--serve", type=int, required=True, help="messages to build")
    args = parser.parse_args(argv)
    asyncio.run(serve_size(args.serve))


if __name__ == "__main__":
    main()
