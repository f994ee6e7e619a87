"""Figure 10, a real model's pace: what streaming at 1 and 8 KB/s costs the user's machine.

Each run starts, one after the other, the real `ink` (`python -m ink_tui --base-url ...`,
an empty home of its own) and the baseline, a bare Textual app that streams the same
answer into Textual's own `Markdown` widget (`Markdown.get_stream`, in an anchored
`VerticalScroll`: Textual's documented way to stream markdown), each in a fresh
pseudo-terminal of `COLUMNS` x `ROWS` (140 x 45), at each rate in `RATES`. The loopback
server (`loopback.py`, its own process) sends figure 2's answer of prose, lists and code
(`answer.py`) in 4-character deltas, paced by its own clock, `STREAM_S` seconds long at
every rate; `ink` gets it after a prompt typed into its input box, the bare app asks
as soon as it is mounted. The two apps take turns, the first of them alternating by run.

A thread reads the terminal all the while (the app never waits on a full pty) and every
`SAMPLE_S` notes the bytes the app wrote so far and the CPU time of the app's process
tree (every process of the session it leads: the sum of each live thread's run time from
`/proc/PID/task/TID/schedstat`, in nanoseconds, since the 10 ms ticks of `/proc/PID/stat`
are too coarse for a 0.5 % target; a thread that ends inside a window takes its time with
it). The stream's window is the server's own: from its first byte plus `SKIP_S` to its
last byte minus `SKIP_S` (the start-up and the end are left out), read from the server's
log afterwards, so nothing waits for a guessed duration. In that window:

- `cpu_pct`: CPU time of the tree over the window's wall time, as a share of one core;
- `tty_bytes_per_char`: bytes written to the terminal over the answer characters the
  server sent in the window (its rate times the window);
- `lag_ms`: from the server's last byte to the answer's last word (`SENTINEL`) read back
  from the terminal: how far behind the stream the screen was at its end;
- `idle_cpu_pct`: from `IDLE_SETTLE_S` after the last word showed, `IDLE_S` of the app
  doing nothing, CPU as a share of one core.

Keys without a suffix are at 1 KB/s, `_8k` at 8 KB/s; `bare_` the baseline's. The fast
paths: `ink` is given `INK_NO_FAST_PATHS` when the runner has it (`child_env` leaves
every `INK_` variable out of a measured process, so it is passed on here by name).

`python -m benchmarks.fig10_pace --bare URL` is the baseline app itself.
"""

from __future__ import annotations

import argparse
import fcntl
import math
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyte

from benchmarks.answer import SENTINEL
from benchmarks.common import REPO_ROOT, Sample, child_env, isolated_home, median
from benchmarks.loopback import LoopbackServer, fetch_log
from benchmarks.pty_app import _ANSI

ROWS, COLUMNS = 45, 140
# Suffix of the summary's keys -> answer bytes a second.
RATES: dict[str, int] = {"": 1024, "_8k": 8 * 1024}


@dataclass(frozen=True)
class Sizes:
    stream_s: dict[str, float]
    """Seconds of streaming at each rate (by key suffix)."""
    skip_s: float
    lag_limit_s: float
    idle_settle_s: float
    idle_s: float


FULL = Sizes({"": 24.0, "_8k": 16.0}, skip_s=4.0, lag_limit_s=20.0, idle_settle_s=1.0, idle_s=3.0)
QUICK = Sizes({"": 3.0, "_8k": 1.5}, skip_s=0.5, lag_limit_s=3.0, idle_settle_s=0.5, idle_s=0.5)
SAMPLE_S = 0.1
# Which processes belong to the app's tree is looked up this often (a scan of /proc).
TREE_SCAN_S = 1.0
READY_TIMEOUT_S = 60.0
PROMPT = "Write the long answer."
# ink's first frame shows the model's name.
INK_READY = "bench-model"
# The bytes of the terminal's output kept for looking up a word (a frame is a few KB).
_TAIL = 1 << 16
FAST_PATHS_VAR = "INK_NO_FAST_PATHS"


def _tree(root: int) -> list[int]:
    """Every process whose session `root` leads (the app was started in a new one)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == root:
            members.append(int(entry.name))
    return members


def _run_ns(pids: list[int]) -> int:
    """Nanoseconds on a CPU of every live thread of `pids`."""
    total = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as stat:
                    total += int(stat.read().split()[0])
            except (OSError, IndexError, ValueError):
                continue
    return total


class Terminal:
    """An app on a pty of `COLUMNS` x `ROWS`, read and sampled by a thread of its own.

    `samples` holds (time, CPU seconds of the app's tree, bytes written so far), one
    every `SAMPLE_S` from the spawn on.
    """

    def __init__(
        self, command: list[str], env: dict[str, str], cwd: Path, *, emulate: bool = False
    ) -> None:
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env={**env, "LINES": str(ROWS), "COLUMNS": str(COLUMNS)},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.written = 0
        # `emulate`: what the terminal shows is kept (pyte), since `ink` writes only the
        # cells that changed and a word can reach the terminal in pieces (its last
        # letters in a later frame). Not for the bare app: it writes ~100 times more,
        # and an emulator keeping up with that would take the cores it is measured on.
        self._screen = pyte.Screen(COLUMNS, ROWS) if emulate else None
        self._stream = pyte.ByteStream(self._screen) if emulate else None
        self.samples: list[tuple[float, float, int]] = []
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        pid = self.proc.pid
        members = [pid]
        next_scan = next_sample = time.monotonic()
        while not self._done.is_set():
            now = time.monotonic()
            if now >= next_scan:
                members = _tree(pid) or [pid]
                next_scan = now + TREE_SCAN_S
            if now >= next_sample:
                cpu_s = _run_ns(members) / 1e9
                self.samples.append((time.monotonic(), cpu_s, self.written))
                next_sample = max(next_sample + SAMPLE_S, now)
            wait = max(0.0, min(next_sample, next_scan) - time.monotonic())
            readable, _, _ = select.select([self._master], [], [], wait)
            if not readable:
                continue
            try:
                data = os.read(self._master, 1 << 16)
            except OSError:  # EIO: the app closed the terminal
                data = b""
            if not data:
                break
            with self._lock:
                self.written += len(data)
                self._tail += data
                del self._tail[:-_TAIL]
                if self._stream is not None:
                    self._stream.feed(data)
        self._done.set()

    def send(self, text: str) -> None:
        os.write(self._master, text.encode())

    def wait_for(self, word: str, timeout: float, since: int = 0) -> float:
        """When `word` was first seen in what the app wrote from byte `since` on."""
        needle = word.encode()
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                start = self.written - len(self._tail)
                recent = bytes(self._tail[max(0, since - start) :])
                screen = self._screen
                shown = "\n".join(screen.display) if screen is not None and since == 0 else ""
            if needle in recent or needle in _ANSI.sub(b"", recent) or word in shown:
                return time.monotonic()
            if self._done.is_set() or time.monotonic() > deadline:
                text = _ANSI.sub(b"", recent[-3000:]).decode("utf-8", "replace")
                raise TimeoutError(f"{word!r} did not show within {timeout} s:\n{text}")
            self._done.wait(0.05)

    def sampled_until(self, until: float, timeout: float) -> None:
        """Wait until a sample at or after `until` is taken."""
        deadline = until + timeout
        while not self.samples or self.samples[-1][0] < until:
            if self._done.is_set() or time.monotonic() > deadline:
                raise RuntimeError("the app's terminal closed before its idle window")
            self._done.wait(SAMPLE_S)

    def stop(self) -> None:
        """End the app and its process group; stop the reader; close the terminal."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._done.set()
        self._thread.join(5)
        os.close(self._master)


def window(
    samples: list[tuple[float, float, int]], start: float, end: float
) -> tuple[float, float, int]:
    """(seconds, CPU seconds, bytes written) between the first sample at or after `start`
    and the last at or before `end`."""
    inside = [s for s in samples if start <= s[0] <= end]
    if len(inside) < 2:
        raise RuntimeError(f"fewer than 2 samples between {start:.2f} and {end:.2f}")
    (t0, cpu0, out0), (t1, cpu1, out1) = inside[0], inside[-1]
    return t1 - t0, cpu1 - cpu0, out1 - out0


def _first_byte(root: str, seen: int, timeout: float) -> float:
    """When the server sent the first byte of the answer asked for after record `seen`."""
    deadline = time.monotonic() + timeout
    while True:
        for record in fetch_log(root)[seen:]:
            if record["kind"] == "first_byte":
                return float(record["t"])
        if time.monotonic() > deadline:
            raise TimeoutError(f"the app did not ask the model within {timeout} s")
        time.sleep(SAMPLE_S)


def _last_byte(root: str, seen: int, first: float, stream_s: float) -> float:
    """When the server sent the answer's last byte (if it could: an app that fell far
    behind may have left before; its nominal end then)."""
    records = fetch_log(root)[seen:]
    paths = [r["path"] for r in records if r["kind"] == "request"]
    if len(paths) != 1:
        raise RuntimeError(f"expected one request to the model, got {paths}")
    ends = [r["t"] for r in records if r["kind"] == "last_byte"]
    return float(ends[0]) if ends else first + stream_s


def _ink_env(root: Path) -> dict[str, str]:
    extra = {FAST_PATHS_VAR: os.environ[FAST_PATHS_VAR]} if FAST_PATHS_VAR in os.environ else {}
    return child_env(TERM="xterm-256color", COLORTERM="truecolor", **isolated_home(root), **extra)


def _command(kind: str, url: str, root: Path) -> tuple[list[str], dict[str, str]]:
    if kind == "ink":
        command = [sys.executable, "-m", "ink_tui", "-C", str(root / "ws")]
        return [*command, "--base-url", url, "--model", "bench-model"], _ink_env(root)
    command = [sys.executable, "-m", "benchmarks.fig10_pace", "--bare", url]
    return command, child_env(TERM="xterm-256color", COLORTERM="truecolor", **isolated_home(root))


def run_app(
    kind: str, url: str, server_root: str, rate: int, stream_s: float, sizes: Sizes
) -> Sample:
    """One app streaming one answer, and then idle: the sample of the module's doc.

    An app that has not shown the answer's end `lag_limit_s` after the stream's nominal
    end has fallen behind (Textual's `Markdown` does at 8 KB/s): it is stopped, its lag
    is that wait (a lower bound, `caught_up` 0) and it has no idle figure. `ink` must
    keep up: falling behind is an error.
    """
    with tempfile.TemporaryDirectory(prefix="ink-bench-pace-") as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / "README.md").write_text("# Sample\n")
        seen = len(fetch_log(server_root))
        command, env = _command(kind, url, root)
        app = Terminal(command, env, REPO_ROOT, emulate=kind == "ink")
        idle: tuple[float, float] | None = None
        try:
            if kind == "ink":
                app.wait_for(INK_READY, READY_TIMEOUT_S)
                app.send(PROMPT)
                app.send("\r")
            first = _first_byte(server_root, seen, READY_TIMEOUT_S)
            limit = first + stream_s + sizes.lag_limit_s
            try:
                shown = app.wait_for(SENTINEL, max(0.0, limit - time.monotonic()))
            except TimeoutError:
                if kind == "ink" or app.proc.poll() is not None:
                    raise
                shown = time.monotonic()
            else:
                idle = (shown + sizes.idle_settle_s, shown + sizes.idle_settle_s + sizes.idle_s)
                app.sampled_until(idle[1], 10.0)
        finally:
            app.stop()
        last = _last_byte(server_root, seen, first, stream_s)
        seconds, cpu_s, written = window(app.samples, first + sizes.skip_s, last - sizes.skip_s)
        idle_pct = math.nan
        if idle is not None:
            idle_seconds, idle_cpu_s, _ = window(app.samples, *idle)
            idle_pct = 100 * idle_cpu_s / idle_seconds
    return {
        "cpu_pct": 100 * cpu_s / seconds,
        "tty_bytes_per_char": written / (rate * seconds),
        "tty_kb_per_s": written / seconds / 1024,
        "lag_ms": (shown - last) * 1000,
        "caught_up": 0 if idle is None else 1,
        "idle_cpu_pct": idle_pct,
        "window_s": seconds,
    }


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    sizes = QUICK if quick else FULL
    answer = {suffix: int(rate * sizes.stream_s[suffix]) for suffix, rate in RATES.items()}
    samples: dict[str, list[Any]] = {
        f"{kind}{suffix}": [] for suffix in RATES for kind in ("ink", "bare")
    }
    with LoopbackServer(tuple(answer.values())) as server:
        for index in range(runs):
            order = ("ink", "bare") if index % 2 == 0 else ("bare", "ink")
            for suffix, rate in RATES.items():
                url = server.paced_url(answer[suffix], rate)
                for kind in order:
                    sample = run_app(kind, url, server.root, rate, sizes.stream_s[suffix], sizes)
                    samples[f"{kind}{suffix}"].append(sample)
    samples["settings"] = [
        {"lag_limit_s": sizes.lag_limit_s, "fast_paths_off": os.environ.get(FAST_PATHS_VAR, "")}
    ] * runs
    return samples


KEYS = (
    "cpu_pct",
    "tty_bytes_per_char",
    "tty_kb_per_s",
    "lag_ms",
    "caught_up",
    "idle_cpu_pct",
    "window_s",
)


def summarize(samples: dict[str, list[Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for suffix in RATES:
        for kind, prefix in (("ink", ""), ("bare", "bare_")):
            runs = samples[f"{kind}{suffix}"]
            for key in KEYS:
                values = [run[key] for run in runs if not math.isnan(run[key])]
                summary[f"{prefix}{key}{suffix}"] = median(values)
    summary["lag_limit_s"] = samples["settings"][0]["lag_limit_s"]
    return summary


def run_bare(url: str) -> None:
    """The baseline: a bare Textual app streaming the answer into Textual's `Markdown`."""
    import json

    import httpx
    from textual import work
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.widgets import Markdown

    class BareStream(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Markdown()

        def on_mount(self) -> None:
            self.stream_answer()

        @work
        async def stream_answer(self) -> None:
            self.query_one(VerticalScroll).anchor()
            stream = Markdown.get_stream(self.query_one(Markdown))
            body = {
                "model": "bench-model",
                "stream": True,
                "messages": [{"role": "user", "content": PROMPT}],
            }
            try:
                async with (
                    httpx.AsyncClient(timeout=None) as client,
                    client.stream("POST", f"{url}/chat/completions", json=body) as response,
                ):
                    async for line in response.aiter_lines():
                        if not line.startswith("data: ") or line == "data: [DONE]":
                            continue
                        choices = json.loads(line[6:])["choices"]
                        text = choices[0]["delta"].get("content") if choices else None
                        if text:
                            await stream.write(text)
            finally:
                await stream.stop()

    BareStream().run()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bare", required=True, metavar="URL", help="the model's base URL")
    args = parser.parse_args(argv)
    run_bare(args.bare)


if __name__ == "__main__":
    main()
