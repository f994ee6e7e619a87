"""Figure 6, RPC mode: events per second to a reader, and `abort` to `agent_settled`.

Both drive a real `ink --mode rpc` process (`python -m ink_tui`, `--no-session`, an empty
home) over its pipes, with a lean reader: raw reads of stdout, split on `\\n`, every line
parsed with `json.loads` and stamped with `time.monotonic()` as it is taken.

- Throughput: the loopback server streams the answer as fast as the socket takes it, one
  SSE event per 4 characters. The rate is the public events the reader got (every line
  but command responses) from the first `message_update` to `agent_settled`, both
  included, over that time (from the prompt's write when both came in one read of the
  pipe, which only a short answer does); the answer's bytes over the same time too.
  Text deltas are merged per network batch (as the TUI does: one `message_update` per
  batch the provider reads, not one per SSE event), so what counts is events delivered to
  and parsed by the reader; `sse_deltas` (what the server sent) over `updates` (the
  `message_update` lines read) is the merge ratio. Baseline, in the same run: the same
  lines, as recorded, written by a bare process as fast as the pipe takes them to the same
  reader: the reader's own ceiling.

  What bounds the event rate (profiled with `--profile`): ink reads the body slower than
  the server writes it, so every batch is what one read of the socket brought: 64 KB
  through httpcore (about 460 SSE deltas, one `message_update` of about 1.8 KB of text),
  up to the read-ahead of 256 KB where the body is pushed from the connection
  (`fastpaths/pushed_body.py`: the transport's own read size), so a quarter as many
  events for the same text. The events per second are then reads per second: the ink
  process spends its time per HTTP chunk (h11, about half) and per SSE event (its JSON,
  about a fifth), while the RPC part (projection, `json.dumps`, one write per turn of
  the loop) is under a tenth.
- One delta per network write (the target, issue 10): the server writes every SSE event
  in a write and HTTP chunk of its own with `TCP_NODELAY`, as a real server streams,
  `EACH_RATE` events a second (`/each/` in `benchmarks/loopback`). While ink keeps up,
  each read brings one event and becomes one `message_update`; when it falls behind,
  what arrived together is merged, so the events per second (counted as above) say how
  many separate network batches ink took, parsed and wrote out per second. Beside it:
  the rate the server actually offered (its first to last byte), and the merge ratio;
  the sample also has how often the server woke to write (`server_groups`: the most
  separate reads a client could make) and the share of a core it took.

  What bounds it (CPU time of the ink process per `message_update`, `--profile`): each
  separate read costs about 150-190 us on the reference machine (2 cores, shared), of
  which waking up for it is 50-80 us even for a bare asyncio reader, and each SSE event
  about 16 us more (h11 and httpx's chunk layers about 10, its SSE line, JSON and reply
  about 6). At 20,000 events a second the events alone take a third of a core; once ink
  falls behind, reads carry more events each and the rate of separate reads drops, so
  on a machine whose cores are busy with other work the rate collapses to a few hundred.
- Abort: the server streams the answer at 8 KB/s; 0.3 s after the first `message_update`
  the reader writes `{"type": "abort"}`. The time runs from that write to reading
  `agent_settled`; the server's view (the hang-up, its clock: one clock on Linux) and the
  abort's own response are reported beside it.

`--profile DIR` runs the ink processes under cProfile (`DIR/throughput.prof`,
`DIR/each.prof`, `DIR/abort.prof`), to find where the time goes when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.answer import deltas, make_answer
from benchmarks.common import (
    REPO_ROOT,
    Sample,
    median,
    run_child,
    start_ink,
    write_json,
)
from benchmarks.loopback import LoopbackServer, fetch_log, last_record

FULL_SIZE = 1024 * 1024
QUICK_SIZE = 16 * 1024
ABORT_SIZE = 200 * 1024
# One delta per write: 51,200 events at 20,000 a second, about 2.6 s of streaming.
EACH_SIZE = 200 * 1024
QUICK_EACH_SIZE = 16 * 1024
EACH_RATE = 20_000
RATE = 8 * 1024
STREAM_FOR_S = 0.3
TIMEOUT_S = 60.0
_READ_BYTES = 1 << 16

# Writes the lines of the file named by argv[1] to stdout as fast as the pipe takes them.
_REPLAY = (
    "import os, sys\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "view = memoryview(data)\n"
    "while view:\n"
    "    view = view[os.write(1, view[:1 << 16]):]\n"
)


@dataclass
class Line:
    at: float
    raw: bytes
    message: dict[str, Any]


@dataclass
class Reader:
    """Reads protocol lines from a process's stdout, parsing and stamping each."""

    fd: int
    lines: list[Line] = field(default_factory=list)
    _rest: list[bytes] = field(default_factory=list)
    closed: bool = False
    closed_at: float | None = None

    def read_until(self, done: Callable[[Line], bool], timeout: float) -> Line:
        """Read until a line matches `done` (checking lines already read first)."""
        for line in self.lines:
            if done(line):
                return line
        deadline = time.monotonic() + timeout
        while not self.closed:
            found = self._read_once(done, deadline - time.monotonic())
            if found is not None:
                return found
        raise RuntimeError("ink closed its stdout before the awaited line")

    def read_for(self, seconds: float) -> None:
        """Keep reading (and parsing) for `seconds`."""
        deadline = time.monotonic() + seconds
        while not self.closed and (left := deadline - time.monotonic()) > 0:
            self._read_once(lambda _: False, left, fail=False)

    def _read_once(
        self, done: Callable[[Line], bool], left: float, fail: bool = True
    ) -> Line | None:
        if left <= 0:
            raise TimeoutError("no awaited line from ink in time")
        readable, _, _ = select.select([self.fd], [], [], left)
        if not readable:
            if fail:
                raise TimeoutError("no awaited line from ink in time")
            return None
        chunk = os.read(self.fd, _READ_BYTES)
        now = time.monotonic()
        if not chunk:
            self.closed = True
            self.closed_at = now
            return None
        *complete, rest = chunk.split(b"\n")
        found = None
        if complete:
            complete[0] = b"".join([*self._rest, complete[0]])
            self._rest = []
            for raw in complete:
                line = Line(now, raw, json.loads(raw))
                self.lines.append(line)
                if found is None and done(line):
                    found = line
        if rest:
            self._rest.append(rest)
        return found


def _type_is(name: str) -> Callable[[Line], bool]:
    return lambda line: line.message.get("type") == name


class Ink:
    """A real `ink --mode rpc` process with its own empty home and workspace."""

    def __init__(self, url: str, tmp: Path, profile: Path | None) -> None:
        self.proc = start_ink(
            [
                *("--mode", "rpc", "--no-session"),
                *("--base-url", url, "--model", "bench-model", "--api-key", "bench-key"),
            ],
            tmp,
            profile,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.reader = Reader(self.proc.stdout.fileno())
        self._stdin = self.proc.stdin.fileno()

    def write(self, command: dict[str, Any]) -> float:
        """Write one command line; returns the moment just before the write."""
        data = (json.dumps(command) + "\n").encode()
        at = time.monotonic()
        os.write(self._stdin, data)
        return at

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.reader.read_for(10)
            code = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        stderr = self.proc.stderr.read().decode(errors="replace")
        if code != 0:
            raise RuntimeError(f"ink --mode rpc exited with {code}:\n{stderr[-4000:]}")


def _events(lines: list[Line]) -> list[Line]:
    return [line for line in lines if line.message.get("type") != "response"]


def _span(first: float, last: float, written: float) -> float:
    """Seconds from `first` to `last` as the reader stamped them; when both came in one
    read (a short answer on a busy host: the stamps are equal), from the prompt's write to
    `last` instead, which bounds the time from above."""
    return last - first if last > first else last - written


def _rate(lines: list[Line], written: float) -> tuple[float, int, int]:
    """Events per second from the first `message_update` to `agent_settled`, the events
    and the text bytes in that window (`written`: when the prompt was written)."""
    events = _events(lines)
    first = next(i for i, line in enumerate(events) if _type_is("message_update")(line))
    last = next(i for i, line in enumerate(events) if _type_is("agent_settled")(line))
    window = events[first : last + 1]
    seconds = _span(window[0].at, window[-1].at, written)
    text = sum(
        len(line.message["delta"]["text"].encode())
        for line in window
        if line.message.get("type") == "message_update"
    )
    return len(window) / seconds, len(window), text


def _stream(url: str, profile: Path | None, tmp: Path) -> tuple[list[Line], float]:
    """One prompt answered by the loopback server at `url`: every line the reader got,
    and when the prompt was written."""
    ink = Ink(url, tmp, profile)
    try:
        written = time.monotonic()
        ink.write({"type": "prompt", "id": "p", "message": "Write the long answer."})
        settled = ink.reader.read_until(_type_is("agent_settled"), TIMEOUT_S)
    finally:
        ink.close()
    if settled.message.get("stop_reason") != "completed":
        raise RuntimeError(f"the run did not complete: {settled.message}")
    return ink.reader.lines, written


def measure_throughput(root: str, size: int, profile: Path | None) -> Sample:
    with tempfile.TemporaryDirectory(prefix="ink-bench-rpc-") as tmp:
        lines, written = _stream(f"{root}/fast/{size}/v1", profile, Path(tmp))
        events_per_s, events, text_bytes = _rate(lines, written)
        updates = [line for line in lines if _type_is("message_update")(line)]
        settled = next(line for line in lines if _type_is("agent_settled")(line))
        seconds = _span(updates[0].at, settled.at, written)
        if text_bytes != size:
            raise RuntimeError(f"the reader got {text_bytes} bytes of text, not {size}")
        baseline = replay(_events(lines), Path(tmp))
    first = last_record(root, "first_byte", f"/fast/{size}/")
    return {
        "events_per_s": events_per_s,
        "events": events,
        "updates": len(updates),
        "sse_deltas": len(deltas(make_answer(size))),
        "seconds": seconds,
        "text_kbps": text_bytes / 1024 / seconds,
        "deltas_per_s": len(deltas(make_answer(size))) / seconds,
        "size": size,
        "first_byte_to_update_ms": None if first is None else (updates[0].at - first["t"]) * 1000,
        "pipe_events_per_s": baseline,
    }


def measure_each(root: str, size: int, rate: int, profile: Path | None) -> Sample:
    """One delta per network write, `rate` a second: the events the reader got per second."""
    path = f"/each/{size}/{rate}/"
    with tempfile.TemporaryDirectory(prefix="ink-bench-rpc-") as tmp:
        lines, written = _stream(f"{root}{path}v1", profile, Path(tmp))
    events_per_s, events, text_bytes = _rate(lines, written)
    if text_bytes != size:
        raise RuntimeError(f"the reader got {text_bytes} bytes of text, not {size}")
    updates = sum(1 for line in lines if _type_is("message_update")(line))
    sent = len(deltas(make_answer(size)))
    first = last_record(root, "first_byte", path)
    last = last_record(root, "last_byte", path)
    groups = last_record(root, "groups", path)
    offered = None
    seconds = None
    if first is not None and last is not None and last["t"] > first["t"]:
        seconds = last["t"] - first["t"]
        offered = sent / seconds
    return {
        "events_per_s": events_per_s,
        "events": events,
        "updates": updates,
        "sse_deltas": sent,
        "size": size,
        "rate": rate,
        "offered_per_s": offered,
        # How many times the server woke and wrote, and the share of a core it took.
        "server_groups": None if groups is None else groups["count"],
        "server_cpu_share": None if groups is None or not seconds else groups["cpu_s"] / seconds,
    }


def replay(events: list[Line], tmp: Path) -> float:
    """The reader's ceiling: the same event lines from a bare process, as fast as it goes."""
    recorded = tmp / "events.jsonl"
    recorded.write_bytes(b"".join(line.raw + b"\n" for line in events))
    proc = subprocess.Popen(
        [sys.executable, "-c", _REPLAY, str(recorded)], stdout=subprocess.PIPE, cwd=REPO_ROOT
    )
    assert proc.stdout is not None
    reader = Reader(proc.stdout.fileno())
    reader.read_for(TIMEOUT_S)
    proc.wait(10)
    if len(reader.lines) != len(events):
        raise RuntimeError(f"replayed {len(events)} lines, read {len(reader.lines)}")
    # From the first bytes read to the end of the pipe: every line read and parsed.
    assert reader.closed_at is not None
    return len(reader.lines) / (reader.closed_at - reader.lines[0].at)


def measure_abort(root: str, profile: Path | None) -> Sample:
    path = f"/paced/{ABORT_SIZE}/{RATE}/"
    with tempfile.TemporaryDirectory(prefix="ink-bench-rpc-") as tmp:
        ink = Ink(f"{root}{path}v1", Path(tmp), profile)
        try:
            ink.write({"type": "prompt", "id": "p", "message": "Write the long answer."})
            ink.reader.read_until(_type_is("message_update"), TIMEOUT_S)
            ink.reader.read_for(STREAM_FOR_S)
            written = ink.write({"type": "abort", "id": "abort"})
            # One `agent_settled` per prompt: the first is the abort's.
            settled = ink.reader.read_until(_type_is("agent_settled"), TIMEOUT_S)
            answered = ink.reader.read_until(
                lambda line: line.message.get("id") == "abort", TIMEOUT_S
            )
        finally:
            ink.close()
    if settled.message.get("stop_reason") != "aborted":
        raise RuntimeError(f"the run was not aborted: {settled.message}")
    hangup = _hangup_after(root, path, written)
    return {
        "settled_ms": (settled.at - written) * 1000,
        "response_ms": (answered.at - written) * 1000,
        "http_closed_ms": None if hangup is None else (hangup["t"] - written) * 1000,
    }


def _hangup_after(root: str, path: str, since: float) -> dict[str, Any] | None:
    """The server's record of this run's hang-up (earlier runs used the same server)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        for record in fetch_log(root):
            if record["kind"] == "hangup" and path in record["path"] and record["t"] >= since:
                return record
        time.sleep(0.02)
    return None


def measure_both(
    root: str, size: int, each_size: int, each_rate: int, profile: Path | None
) -> Sample:
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
    throughput = measure_throughput(root, size, profile and profile / "throughput.prof")
    each = measure_each(root, each_size, each_rate, profile and profile / "each.prof")
    abort = measure_abort(root, profile and profile / "abort.prof")
    return {"throughput": throughput, "each": each, "abort": abort}


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    size = QUICK_SIZE if quick else FULL_SIZE
    each_size = QUICK_EACH_SIZE if quick else EACH_SIZE
    with LoopbackServer((size, each_size, ABORT_SIZE)) as server:
        args = ["--root", server.root, "--size", str(size), "--each-size", str(each_size)]
        return {"ink": [run_child("fig6_rpc", args) for _ in range(runs)]}


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    put = [run["throughput"] for run in runs]
    each = [run["each"] for run in runs]
    abort = [run["abort"] for run in runs]
    closed = [run["http_closed_ms"] for run in abort if run["http_closed_ms"] is not None]
    return {
        "rpc_size_kb": put[0]["size"] / 1024,
        "events_per_s": median([run["events_per_s"] for run in put]),
        "pipe_events_per_s": median([run["pipe_events_per_s"] for run in put]),
        "text_kbps": median([run["text_kbps"] for run in put]),
        "deltas_per_s": median([run["deltas_per_s"] for run in put]),
        "events": median([run["events"] for run in put]),
        "sse_deltas": put[0]["sse_deltas"],
        "merge_ratio": median([run["sse_deltas"] / run["updates"] for run in put]),
        "each_rate": each[0]["rate"],
        "each_size_kb": each[0]["size"] / 1024,
        "each_events_per_s": median([run["events_per_s"] for run in each]),
        "each_offered_per_s": median(
            [run["offered_per_s"] for run in each if run["offered_per_s"] is not None]
        ),
        "each_merge_ratio": median([run["sse_deltas"] / run["updates"] for run in each]),
        "abort_settled_ms": median([run["settled_ms"] for run in abort]),
        "abort_response_ms": median([run["response_ms"] for run in abort]),
        "abort_http_closed_ms": median(closed),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--root", required=True, help="the loopback server's root URL")
    parser.add_argument("--size", type=int, default=FULL_SIZE, help="throughput answer bytes")
    parser.add_argument(
        "--each-size", type=int, default=EACH_SIZE, help="one-delta-per-write answer bytes"
    )
    parser.add_argument(
        "--each-rate", type=int, default=EACH_RATE, help="one-delta-per-write events/s"
    )
    parser.add_argument("--profile", type=Path, help="run ink under cProfile, into this dir")
    args = parser.parse_args(argv)
    sample = measure_both(args.root, args.size, args.each_size, args.each_rate, args.profile)
    write_json(args.out, sample)


if __name__ == "__main__":
    main()
