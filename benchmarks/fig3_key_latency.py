"""Figure 3, key latency while streaming: typing into the input box during a fast answer.

The loopback server streams a 384 KB answer at 32 KB/s (a fast model, some 8,000 tok/s)
in 4-byte deltas: 12 s of streaming. From the first delta on the bus to the end of the
reply, a thread sends one key press every 50 ms the way a terminal driver's input thread
does; each latency runs from the send to the character being in the input widget (the
time its `TextArea.Changed` message was created, inside the edit). The box is never
cleared: a long correction typed while the model writes. In the same run, before the
stream, the same presses with the app idle give the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import string
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.widgets import TextArea

from benchmarks.answer import SENTINEL
from benchmarks.common import Sample, median, percentile, run_child, write_json
from benchmarks.harness import SIZE, make_ink_app, sink, start_ink, submit, wait_for
from benchmarks.loopback import LoopbackServer

FULL_SIZE = 384 * 1024
QUICK_SIZE = 4 * 1024
RATE = 32 * 1024
PRESS_INTERVAL_S = 0.05
IDLE_PRESSES = 40
QUICK_IDLE_PRESSES = 10
KEYS = string.ascii_lowercase


class KeyTimer:
    """Presses keys from a thread every `interval` s; matches each to its edit.

    One key makes one edit and one `TextArea.Changed`, created in the edit, in key order;
    the message hook may see a message more than once (it bubbles) and later than the
    edit, so edits are told apart and ordered by their creation time.
    """

    def __init__(self, app: Any, interval: float) -> None:
        self.app = app
        self.interval = interval
        self.sent: list[float] = []
        self.edits: set[float] = set()
        self.base = 0
        self.active = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def on_message(self, message: Message) -> None:
        """`run_test(message_hook=...)`: sees every message as it is dispatched."""
        if not self.active:
            return
        if isinstance(message, TextArea.Changed) and message.text_area is self.app.prompt:
            self.edits.add(message.time)

    def start(self, limit: int | None = None) -> None:
        self.base = len(self.app.prompt.text)
        self.sent = []
        self.edits = set()
        self.active = True
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(limit,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self, limit: int | None) -> None:
        driver = sink(self.app)
        next_at = time.monotonic()
        while not self._stop.is_set() and (limit is None or len(self.sent) < limit):
            delay = next_at - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                break
            key = KEYS[len(self.sent) % len(KEYS)]
            self.sent.append(driver.press(key, key))
            next_at += self.interval

    async def settle(self) -> None:
        """Wait until every sent key has reached the box."""
        with contextlib.suppress(TimeoutError):
            await wait_for(lambda: len(self.edits) >= len(self.sent), 5, "the last keys")

    def latencies_ms(self) -> list[float]:
        self.active = False
        typed = len(self.app.prompt.text) - self.base
        if len(self.edits) != len(self.sent) or typed != len(self.sent):
            raise RuntimeError(
                f"{len(self.sent)} keys sent, {len(self.edits)} edits seen, {typed} typed"
            )
        edits = sorted(self.edits)
        return [(edit - sent) * 1000 for edit, sent in zip(edits, self.sent, strict=True)]


def key_stats(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "max_ms": max(latencies),
        "presses": len(latencies),
    }


async def measure_ink(root: str, size: int, idle_presses: int) -> Sample:
    url = f"{root}/paced/{size}/{RATE}/v1"
    with tempfile.TemporaryDirectory(prefix="ink-bench-ws-") as tmp:
        app = make_ink_app(url, Path(tmp))
        keys = KeyTimer(app, PRESS_INTERVAL_S)
        async with app.run_test(headless=False, size=SIZE, message_hook=keys.on_message):
            clock = await start_ink(app)
            # Baseline: the same presses with nothing running.
            keys.start(limit=idle_presses)
            await asyncio.sleep(idle_presses * PRESS_INTERVAL_S + 0.1)
            keys.stop()
            await keys.settle()
            idle = keys.latencies_ms()
            app.prompt.clear()
            await asyncio.sleep(0.1)

            streaming = clock.wait_for(lambda e: e.type == "text_delta")
            ended = clock.wait_for(lambda e: e.type == "message_end")
            shown = sink(app).watch(SENTINEL)
            await submit(app, "Write the long answer.")
            await asyncio.wait_for(streaming, 30)
            keys.start()
            await asyncio.wait_for(ended, size / RATE * 3 + 30)
            keys.stop()
            await keys.settle()
            busy = keys.latencies_ms()
            await asyncio.wait_for(shown, 30)
            assert app.controller is not None
            await asyncio.wait_for(app.controller.wait_idle(), 10)
    return {"streaming": key_stats(busy), "idle": key_stats(idle)}


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    size = QUICK_SIZE if quick else FULL_SIZE
    idle = QUICK_IDLE_PRESSES if quick else IDLE_PRESSES
    samples: dict[str, list[Any]] = {"ink": []}
    with LoopbackServer((size,)) as server:
        for _ in range(runs):
            args = ["--root", server.root, "--size", str(size), "--idle-presses", str(idle)]
            samples["ink"].append(run_child("fig3_key_latency", args))
    return samples


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    summary = {
        f"{key}": median([run["streaming"][key] for run in runs])
        for key in ("p50_ms", "p99_ms", "max_ms", "presses")
    }
    summary["idle_p50_ms"] = median([run["idle"]["p50_ms"] for run in runs])
    summary["idle_p99_ms"] = median([run["idle"]["p99_ms"] for run in runs])
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--root", required=True, help="the loopback server's root URL")
    parser.add_argument("--size", type=int, default=FULL_SIZE)
    parser.add_argument("--idle-presses", type=int, default=IDLE_PRESSES)
    args = parser.parse_args(argv)
    write_json(args.out, asyncio.run(measure_ink(args.root, args.size, args.idle_presses)))


if __name__ == "__main__":
    main()
