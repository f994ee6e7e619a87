"""Figure 2, streaming ingest: a 200 KB markdown answer in 4-byte deltas, as fast as it comes.

`ink`: the loopback server streams the answer as fast as the socket takes it (one SSE event
per 4 characters); the time runs from the server's first byte to the frame that puts the
answer's last word on screen, through HTTP, SSE parsing, the agent loop, the bus and the
transcript. Baseline, in the same run: a bare Textual app with the same answer written in
the same 4-character deltas, from memory, to `Markdown.get_stream()`. The stock widget
re-renders as it goes and slows down as the document grows (the whole 200 KB took about
220 s on the reference machine), so the baseline stops writing after `BARE_CAP_S`, ends
with the last word, and its rate is over what it got through (`bare_chars`): generous to
the baseline, since its rate only falls further on.

Both render every frame as for a real terminal (`SinkDriver`) at 100x32.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown

from benchmarks.answer import SENTINEL, deltas, make_answer
from benchmarks.common import Sample, median, run_child, write_json
from benchmarks.harness import SIZE, SinkDriver, make_ink_app, sink, start_ink, submit
from benchmarks.loopback import LoopbackServer, last_record

FULL_SIZE = 200 * 1024
QUICK_SIZE = 8 * 1024
TIMEOUT_S = 180.0
BARE_CAP_S = 10.0
QUICK_BARE_CAP_S = 2.0


class BareMarkdownApp(App[None]):
    """The baseline: a scrolling Markdown widget fed by its stream, and an input."""

    CSS = "VerticalScroll { height: 1fr; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown()
        yield Input(placeholder="bare baseline")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).anchor()


async def measure_bare(size: int, cap_s: float) -> Sample:
    app = BareMarkdownApp()
    app.driver_class = SinkDriver
    pieces = deltas(make_answer(size))
    chars = 0
    capped = False
    async with app.run_test(headless=False, size=SIZE) as pilot:
        await pilot.pause()
        shown = sink(app).watch(SENTINEL)
        stream = Markdown.get_stream(app.query_one(Markdown))
        started = time.monotonic()
        for piece in pieces:
            await stream.write(piece)
            chars += len(piece)
            if time.monotonic() - started > cap_s and SENTINEL not in piece:
                capped = True
                ending = f"\n\n{SENTINEL}"
                await stream.write(ending)
                chars += len(ending)
                break
        await stream.stop()
        on_screen = await asyncio.wait_for(shown, TIMEOUT_S)
    seconds = on_screen - started
    return {"seconds": seconds, "kbps": chars / 1024 / seconds, "chars": chars, "capped": capped}


async def measure_ink(root: str, size: int) -> Sample:
    url = f"{root}/fast/{size}/v1"
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        app = make_ink_app(url, Path(tmp))
        async with app.run_test(headless=False, size=SIZE):
            clock = await start_ink(app)
            shown = sink(app).watch(SENTINEL)
            cpu = time.process_time()
            await submit(app, "Write the long answer.")
            on_screen = await asyncio.wait_for(shown, TIMEOUT_S)
            cpu = time.process_time() - cpu
            assert app.controller is not None
            await asyncio.wait_for(app.controller.wait_idle(), 10)
            frames = sink(app).frames
    first = last_record(root, "first_byte", f"/fast/{size}/")
    if first is None:
        raise RuntimeError("the server logged no first byte")
    seconds = on_screen - first["t"]
    return {
        "seconds": seconds,
        "kbps": size / 1024 / seconds,
        # Where the time went: the bus saw the whole reply, then the screen caught up.
        "bus_end_s": clock.first["message_end"] - first["t"],
        # CPU the app took meanwhile (all of it on the loop's thread but the markdown
        # warm-up): well under `seconds` means the cores were busy with something else.
        "cpu_s": cpu,
        "size": size,
        "frames": frames,
    }


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    size = QUICK_SIZE if quick else FULL_SIZE
    cap = QUICK_BARE_CAP_S if quick else BARE_CAP_S
    samples: dict[str, list[Any]] = {"ink": [], "bare": []}
    with LoopbackServer((size,)) as server:
        for _ in range(runs):
            bare = ["--variant", "bare", "--cap", str(cap), *_size(size)]
            samples["bare"].append(run_child("fig2_ingest", bare))
            samples["ink"].append(
                run_child("fig2_ingest", ["--variant", "ink", "--root", server.root, *_size(size)])
            )
    return samples


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    ink = [s["kbps"] for s in samples["ink"]]
    bare = [s["kbps"] for s in samples["bare"]]
    return {
        "size_kb": samples["ink"][0]["size"] / 1024,
        "ink_kbps": median(ink),
        "bare_kbps": median(bare),
        "ratio": median([i / b for i, b in zip(ink, bare, strict=True)]),
        "ink_bus_end_s": median([s["bus_end_s"] for s in samples["ink"]]),
        "ink_cpu_s": median([s["cpu_s"] for s in samples["ink"]]),
        "bare_chars": median([s["chars"] for s in samples["bare"]]),
    }


def _size(size: int) -> list[str]:
    return ["--size", str(size)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--variant", choices=["ink", "bare"], required=True)
    parser.add_argument("--root", help="the loopback server's root URL (ink)")
    parser.add_argument("--size", type=int, default=FULL_SIZE)
    parser.add_argument("--cap", type=float, default=BARE_CAP_S, help="bare: seconds of writing")
    args = parser.parse_args(argv)
    if args.variant == "ink":
        result = asyncio.run(measure_ink(args.root, args.size))
    else:
        result = asyncio.run(measure_bare(args.size, args.cap))
    write_json(args.out, result)


if __name__ == "__main__":
    main()
