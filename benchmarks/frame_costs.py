"""Where a streamed frame's CPU goes: the app at a model's pace, each phase of a frame timed.

    python -m benchmarks.frame_costs [--rate 1024] [--warmup-seconds 3] [--window-seconds 12]
                                     [--out FILE]

Not a figure with a target: the map behind figure 10's work (benchmarks/README.md,
"Where a frame goes"), so that the next change starts from measured costs. The real app
(`harness.make_ink_app`, with network reads gathered as `ink` gathers them; frames
rendered to terminal escape sequences and dropped, `harness.SinkDriver`) at figure 10's
140 x 45 streams figure 10's answer from the loopback server at RATE bytes a second.
Over a window in the middle of the stream, each phase below is timed by the CPU of the
app's thread (`time.thread_time`) around the function that runs it; the table gives its
CPU per transcript frame and its share of the thread's CPU in the window. Phases nest
(the indentation), and a phase counts its every call, in its parent or not (the tail is
drawn by the compositor too when it was not in the frame); "rest" is the thread's CPU
outside the top phases and the collector (Textual's message dispatch, tasks and timers,
the loop itself).

In-process, without a pseudo-terminal: the terminal's CPU and the writer thread's are
not here (figure 10 counts them), and a phase's own timing costs a few microseconds a
call. With `INK_NO_FAST_PATHS=1` in the environment the same phases show the stock paths.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.answer import SENTINEL
from benchmarks.common import write_json
from benchmarks.harness import make_ink_app, sink, start_ink, submit
from benchmarks.loopback import LoopbackServer

SIZE = (140, 45)
RATE = 1024
WARMUP_S = 3.0
WINDOW_S = 12.0
# Past the window: the stream must still run when it closes.
MARGIN_S = 3.0
# From the prompt to the answer's first text: a stuck start fails, not hangs.
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Phase:
    label: str
    depth: int
    # "module:Owner.name", or "module:name" for a module-level function.
    where: str


# In the order of the table.
PHASES = (
    Phase("transcript frame", 0, "ink_tui.ui.widgets.transcript_frames:TranscriptFrames.flush_now"),
    Phase(
        "take in text, draw finished blocks", 1, "ink_tui.ui.blocks.answer_block:AnswerBlock.flush"
    ),
    Phase("draw the open tail", 1, "ink_tui.ui.blocks.answer_block:AnswerBlock._render_tail"),
    Phase("scroll state, scrollbar", 1, "textual.widget:Widget._scroll_update"),
    Phase("repaint rows", 1, "ink_tui.ui.widgets.transcript_frames:TranscriptFrames._repaint_at"),
    Phase(
        "terminal scroll", 2, "ink_tui.ui.widgets.row_redraw_view:RowRedrawView._scroll_by_terminal"
    ),
    Phase("beat (panel, status)", 1, "ink_tui.ui.frame_beat:FrameBeat.beat"),
    Phase("screen update", 0, "textual.screen:Screen._on_timer_update"),
    Phase("scrollbar rows compared", 1, "ink_tui.fastpaths.scrollbar_rows:_exchange"),
    Phase("compositor refresh", 1, "textual.screen:Screen._compositor_refresh"),
    Phase("rows rendered", 2, "textual._compositor:Compositor.render_update"),
    Phase("transcript rows", 3, "ink_tui.ui.widgets.transcript:Transcript.render_lines"),
    Phase("activity panel rows", 3, "ink_tui.ui.widgets.activity_panel:ActivityPanel.render_line"),
    Phase("network reads taken in", 0, "ink_tui.providers.lean_transport:_Protocol.data_received"),
    Phase("model's SSE parsed into a reply", 0, "ink_tui.providers.openai_body:_feed"),
    Phase("events published (bus, subscribers)", 0, "ink_tui.control.bus:EventBus.publish"),
)
GC = "garbage collection"
TOP = [phase.label for phase in PHASES if phase.depth == 0]
FRAME = PHASES[0].label


class Timed:
    """Thread CPU summed per phase while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.cpu: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self.missing: list[str] = []
        self._gc_started: float | None = None

    def install(self) -> None:
        import importlib

        for phase in PHASES:
            module_name, _, path = phase.where.partition(":")
            owner: Any = importlib.import_module(module_name)
            *owners, name = path.split(".")
            for part in owners:
                owner = getattr(owner, part, None)
            function = getattr(owner, name, None)
            if function is None:
                self.missing.append(phase.label)
                continue
            setattr(owner, name, self._timed(phase.label, function))
        gc.callbacks.append(self._collection)

    def _collection(self, phase: str, info: dict[str, int]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._gc_started = time.thread_time()
        elif self._gc_started is not None:
            self.cpu[GC] += time.thread_time() - self._gc_started
            self.calls[GC] += 1
            self._gc_started = None

    def _timed(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.on:
                return function(*args, **kwargs)
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.cpu[label] += time.thread_time() - started
                self.calls[label] += 1

        return timed


async def _measure(url: str, timed: Timed, warmup_s: float, window_s: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ink-bench-frames-") as tmp:
        from ink_tui.ui.widgets.transcript_pacing import NETWORK_GATHER_S

        app = make_ink_app(url, Path(tmp), gather_s=NETWORK_GATHER_S)
        async with app.run_test(headless=False, size=SIZE):
            clock = await start_ink(app)
            shown = sink(app).watch(SENTINEL)
            await submit(app, "Write the long answer.")
            first_text = clock.wait_for(lambda event: event.type == "text_delta")
            await asyncio.wait_for(first_text, START_TIMEOUT_S)
            await asyncio.sleep(warmup_s)
            timed.on = True
            started = time.thread_time()
            await asyncio.sleep(window_s)
            thread_cpu = time.thread_time() - started
            timed.on = False
            streaming = not shown.done()
            await asyncio.wait_for(shown, window_s + 60)
    return {"thread_cpu_s": thread_cpu, "window_s": window_s, "streamed_through": streaming}


def measure(rate: int, warmup_s: float, window_s: float) -> dict[str, Any]:
    timed = Timed()
    timed.install()
    size = int(rate * (warmup_s + window_s + MARGIN_S))
    with LoopbackServer() as server:
        url = server.paced_url(size, rate)
        result = asyncio.run(_measure(url, timed, warmup_s, window_s))
    frames = timed.calls[FRAME]
    if not frames:
        raise RuntimeError("no transcript frame was drawn in the window")
    if not result["streamed_through"]:
        raise RuntimeError("the answer ended inside the window: lengthen the stream")
    thread_cpu = result["thread_cpu_s"]

    def row(label: str, depth: int, cpu: float) -> dict[str, Any]:
        return {
            "phase": label,
            "depth": depth,
            "calls": timed.calls[label],
            "us_per_frame": 1e6 * cpu / frames,
            "share_pct": 100 * cpu / thread_cpu,
        }

    rows = [row(phase.label, phase.depth, timed.cpu[phase.label]) for phase in PHASES]
    rows.append(row(GC, 0, timed.cpu[GC]))
    rows.append(row("rest", 0, thread_cpu - sum(timed.cpu[label] for label in [*TOP, GC])))
    return {
        "rate": rate,
        "frames": frames,
        "frames_per_s": frames / result["window_s"],
        "thread_cpu_pct": 100 * thread_cpu / result["window_s"],
        "us_per_frame": 1e6 * thread_cpu / frames,
        "missing": timed.missing,
        "phases": rows,
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['frames']} frames ({result['frames_per_s']:.1f} a second) at "
        f"{result['rate']} B/s; the app's thread {result['thread_cpu_pct']:.2f} % of a core, "
        f"{result['us_per_frame']:.0f} us a frame",
        "",
        "| phase | calls | us a frame | share of the thread |",
        "| --- | ---: | ---: | ---: |",
    ]
    for row in result["phases"]:
        label = "&nbsp;&nbsp;" * row["depth"] + row["phase"]
        lines.append(
            f"| {label} | {row['calls']} | {row['us_per_frame']:.0f} | {row['share_pct']:.1f} % |"
        )
    if result["missing"]:
        lines.append(f"\nnot found (not timed): {', '.join(result['missing'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rate", type=int, default=RATE)
    parser.add_argument("--warmup-seconds", type=float, default=WARMUP_S)
    parser.add_argument("--window-seconds", type=float, default=WINDOW_S)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = measure(args.rate, args.warmup_seconds, args.window_seconds)
    print(table(result))
    if args.out is not None:
        write_json(args.out, result)


if __name__ == "__main__":
    main()
