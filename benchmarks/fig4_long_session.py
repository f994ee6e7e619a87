"""Figure 4, long session: a transcript of 10, then 20,000 messages, in one app.

The transcript is built the way a resumed session rebuilds it, through the `Transcript`
methods the run events call. Messages come in units of five: the user's prompt, an
answer (prose, a list, a code block), a `bash` call, its 200-line result (one tool fold)
and a short answer; 20,000 messages hold 4,000 tool folds. At each size, once everything
is drawn:

- RSS of the process (after a garbage collection);
- append: `append_answer` + `end_answer` of one more short answer, to the frame that shows
  its last word (median of several);
- scroll: one page up or down (alternating, so it never hits the top), to the next frame
  written (median of several).

The ratios (20,000 vs 10) are per run, then the median over runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Sample, median, rss_mib, run_child, write_json
from benchmarks.harness import SIZE, make_ink_app, sink, start_ink

FULL_SIZES = (10, 20000)
QUICK_SIZES = (10, 50)
MESSAGES_PER_UNIT = 5
FOLD_LINES = 200
APPENDS = 9
SCROLLS = 60
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


async def _appends(app: Any, tag: str) -> list[float]:
    from ink_tui.ui.widgets.transcript import Transcript

    transcript = app.query_one(Transcript)
    driver = sink(app)
    times: list[float] = []
    # The user is at the bottom, following: otherwise (after the scroll figure of the
    # previous size) the new answer is drawn off screen and never shows.
    transcript.follow()
    await asyncio.sleep(0.05)
    for n in range(APPENDS):
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


async def _scrolls(app: Any) -> list[float]:
    from ink_tui.ui.widgets.transcript import Transcript

    transcript = app.query_one(Transcript)
    driver = sink(app)
    times: list[float] = []
    for n in range(SCROLLS):
        frame = driver.next_frame()
        started = time.monotonic()
        if n % 2 == 0:
            transcript.scroll_page_up(animate=False)
        else:
            transcript.scroll_page_down(animate=False)
        times.append((await asyncio.wait_for(frame, TIMEOUT_S) - started) * 1000)
        await asyncio.sleep(0.05)
    transcript.follow()
    await asyncio.sleep(0.05)
    return times


async def measure_sizes(sizes: tuple[int, ...]) -> Sample:
    from ink_tui.ui.widgets.transcript import Transcript

    result: Sample = {}
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        app = make_ink_app("http://127.0.0.1:9/v1", Path(tmp))
        async with app.run_test(headless=False, size=SIZE):
            await start_ink(app)
            app.prompt.cursor_blink = False
            transcript = app.query_one(Transcript)
            units = 0
            for messages in sizes:
                target = max(1, messages // MESSAGES_PER_UNIT)
                started = time.monotonic()
                while units < target:
                    count = min(BATCH_UNITS, target - units)
                    add_units(transcript, units, count)
                    units += count
                    await asyncio.sleep(0)
                await _settle(app)
                build_s = time.monotonic() - started
                gc.collect()
                rss = rss_mib()
                appends = await _appends(app, str(messages))
                scrolls = await _scrolls(app)
                result[str(messages)] = {
                    "messages": units * MESSAGES_PER_UNIT,
                    "folds": units,
                    "build_s": build_s,
                    "rss_mib": rss,
                    "append_ms": median(appends),
                    "scroll_ms": median(scrolls),
                    "widgets": len(list(app.query("*"))),
                    "appends_ms": appends,
                    "scrolls_ms": scrolls,
                }
    return result


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    sizes = QUICK_SIZES if quick else FULL_SIZES
    args = ["--sizes", ",".join(str(size) for size in sizes)]
    return {"ink": [run_child("fig4_long_session", args, timeout=900) for _ in range(runs)]}


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
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes", default=",".join(str(size) for size in FULL_SIZES))
    args = parser.parse_args(argv)
    sizes = tuple(int(size) for size in args.sizes.split(","))
    write_json(args.out, asyncio.run(measure_sizes(sizes)))


if __name__ == "__main__":
    main()
