"""Figure 11, `ink serve` at 100 sessions, each streaming 1 KB/s with one SSE client (#24).

Each run is a fresh child process that starts its own loopback model server
(`benchmarks.serve_model`: `benchmarks.stamped_server`'s answers, every stream paced
by one thread, with a listen queue for 100 connections at once; its CPU is read too)
and a real `ink serve` (`benchmarks.fig7_serve.InkServe`: empty home and workspace,
`--base-url` to that server). It then:

1. creates `SESSIONS` sessions and opens one SSE stream for each
   (`benchmarks.serve_clients`: httpx `aiter_raw()`, all in this process's one asyncio
   loop), then posts every prompt at once;
2. each model stream writes every `TICK_MS` one HTTP chunk (`TCP_NODELAY`) of SSE
   deltas that starts with a marker `<t=SECONDS>`, its send time, `RATE` bytes of text
   a second in all (the marker counts), for `STREAM_S` seconds. The pacing keeps to the
   model server's own clock (a late tick does not push the rest back);
3. once every session has shown its first delta, the window opens `WARMUP_S` after the
   last stream's first write (on the clock: the window is a stretch of time, nothing
   waits for it to be long enough)
   and lasts `WINDOW_S`, in the middle of every stream: each session is checked to have
   markers sent before the window opens and after it closes;
4. every run must complete (`agent_settled`, `completed`) with every marker delivered.

Measured over the window:

- `p99_ms` (target <= 50), with `p50_ms` and `max_ms`: for every marker sent in the
  window, the client's read time minus the send time (model server's write -> ink's
  provider -> session -> SSE, with its up-to-16 ms merge window -> the client's read);
- `cpu_pct` (target <= 25): the server process's CPU (user + system, all threads, from
  `/proc/<pid>/stat`) over the window, as a share of one core;
- `us_per_delta`: that CPU divided by the deltas the model sent in the window. A delta
  here is one model write (one network batch: a marker and a few 4-character SSE events,
  which ink turns into one `message_update`);
- `rss_mib` (target <= 200): the server's peak RSS (`VmHWM`) once every run has settled;
  beside it the idle RSS at start and `VmRSS` at the window's close;
- for the reader to judge the measurement: the clients' own CPU (this process, all
  threads: `client_cpu_pct`), how late their loop ran a 10 ms timer (`client_lag_p99_ms`:
  a lagging client would stamp its own delay), the model server's CPU
  (`model_cpu_pct`), and the time the server's threads were runnable but had no CPU, as
  a share of the window summed over its threads (`server_wait_pct`, from schedstat: the
  other processes of the benchmark, and the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Sample, median, percentile, run_child, write_json
from benchmarks.fig7_serve import InkServe
from benchmarks.serve_clients import (
    LoopLag,
    StreamClient,
    open_streams,
    process_cpu_s,
    prompt,
    vm_kib,
)
from benchmarks.serve_model import ModelServer
from benchmarks.stamped_server import stamped_url

SESSIONS = 100
QUICK_SESSIONS = 10
RATE = 1024
# A write every 20 ms, as a server flushing what its model made meanwhile: 20 bytes of
# text (the ~15-character marker, then 4-character deltas), 50 writes a second per
# session, 5,000 for 100 sessions.
TICK_MS = 20
STREAM_S = 30.0
WARMUP_S = 5.0
WINDOW_S = 15.0
# Quick: 2 s of margin after the window, so that a busy machine (the test suite) does
# not end a stream before the window closes.
QUICK_STREAM_S = 4.0
QUICK_WARMUP_S = 0.5
QUICK_WINDOW_S = 1.5
TIMEOUT_S = 120.0


def window_latencies_ms(readers: list[StreamClient], opened: float, closed: float) -> list[float]:
    """For every marker sent in [opened, closed): read time minus send time, in ms."""
    return [
        (at - sent) * 1000
        for reader in readers
        for at, sent in reader.stamps
        if opened <= sent < closed
    ]


def check_runs(readers: list[StreamClient], expected: int, opened: float, closed: float) -> None:
    """Every run completed, every marker arrived, and the window lay inside each stream."""
    for reader in readers:
        stop = None if reader.settled is None else reader.settled.get("stop_reason")
        if stop != "completed":
            raise RuntimeError(f"session {reader.session_id} did not complete: {reader.settled}")
        if len(reader.stamps) != expected:
            raise RuntimeError(
                f"session {reader.session_id}: {len(reader.stamps)} markers, not {expected}"
            )
        sent = [s for _, s in reader.stamps]
        if not (min(sent) < opened and max(sent) >= closed):
            raise RuntimeError(
                f"session {reader.session_id} streamed {min(sent) - opened:+.2f} s to "
                f"{max(sent) - closed:+.2f} s of the window (opened, closed): not across it"
            )


async def measure_once(
    sessions: int, stream_s: float, warmup_s: float, window_s: float, profile: Path | None
) -> Sample:
    with ModelServer() as model, tempfile.TemporaryDirectory(prefix="ink-bench-s100-") as tmp:
        model_pid = model.pid
        server = InkServe(stamped_url(model.root, stream_s, RATE, TICK_MS), Path(tmp), profile)
        try:
            await server.started()
            pid = server.proc.pid
            idle_rss = vm_kib(pid, "VmHWM") / 1024
            async with server.client() as client:
                readers = await open_streams(client, sessions)
                tasks = [asyncio.create_task(reader.run()) for reader in readers]
                try:
                    await asyncio.gather(*(prompt(client, r.session_id) for r in readers))
                    await asyncio.wait_for(
                        asyncio.gather(*(r.first_delta.wait() for r in readers)), TIMEOUT_S
                    )
                    # From the last stream's first write, by the model server's clock.
                    started = max(r.stamps[0][1] for r in readers)
                    await asyncio.sleep(max(0.0, started + warmup_s - time.monotonic()))
                    opened = time.monotonic()
                    cpu0, wait0 = process_cpu_s(pid), server.runqueue_s()
                    model0, self0 = process_cpu_s(model_pid), time.process_time()
                    lag = LoopLag()
                    await lag.run(opened + window_s)
                    closed = time.monotonic()
                    cpu, wait = process_cpu_s(pid) - cpu0, server.runqueue_s() - wait0
                    model_cpu, self_cpu = (
                        process_cpu_s(model_pid) - model0,
                        time.process_time() - self0,
                    )
                    window_rss = vm_kib(pid, "VmRSS") / 1024
                    await asyncio.wait_for(asyncio.gather(*tasks), TIMEOUT_S)
                finally:
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*(r.aclose() for r in readers))
                for reader in readers:
                    await client.delete(f"/api/sessions/{reader.session_id}")
            peak_rss = vm_kib(pid, "VmHWM") / 1024
        finally:
            server.close()
    check_runs(readers, round(stream_s * 1000 / TICK_MS), opened, closed)
    samples = window_latencies_ms(readers, opened, closed)
    wall = closed - opened
    return {
        "sessions": sessions,
        "rate": RATE,
        "tick_ms": TICK_MS,
        "stream_s": stream_s,
        "window_s": wall,
        "deltas": len(samples),
        "deltas_per_s": len(samples) / wall,
        "sse_messages": sum(r.messages for r in readers),
        "p50_ms": percentile(samples, 50),
        "p99_ms": percentile(samples, 99),
        "max_ms": max(samples),
        "cpu_pct": 100 * cpu / wall,
        "us_per_delta": 1e6 * cpu / len(samples),
        "idle_rss_mib": idle_rss,
        "window_rss_mib": window_rss,
        "rss_mib": peak_rss,
        "client_cpu_pct": 100 * self_cpu / wall,
        "client_lag_p99_ms": percentile(lag.lags_ms, 99),
        "model_cpu_pct": 100 * model_cpu / wall,
        "server_wait_pct": 100 * wait / wall,
    }


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    if quick:
        args = ["--sessions", str(QUICK_SESSIONS), "--stream-seconds", str(QUICK_STREAM_S)]
        args += ["--warmup-seconds", str(QUICK_WARMUP_S), "--window-seconds", str(QUICK_WINDOW_S)]
    else:
        args = []
    return {"ink": [run_child("fig11_serve100", args) for _ in range(runs)]}


_MEDIANS = (
    "p50_ms",
    "p99_ms",
    "max_ms",
    "cpu_pct",
    "us_per_delta",
    "rss_mib",
    "idle_rss_mib",
    "window_rss_mib",
    "deltas_per_s",
    "client_cpu_pct",
    "client_lag_p99_ms",
    "model_cpu_pct",
    "server_wait_pct",
)


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    summary: dict[str, float] = {
        # Named for this figure: report.py's label defaults are one dict for all figures.
        "serve100_sessions": runs[0]["sessions"],
        "serve100_kbps": runs[0]["rate"] / 1024,
        "tick_ms": runs[0]["tick_ms"],
        "window_s": runs[0]["window_s"],
    }
    for key in _MEDIANS:
        summary[key] = median([run[key] for run in runs])
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--stream-seconds", type=float, default=STREAM_S)
    parser.add_argument("--warmup-seconds", type=float, default=WARMUP_S)
    parser.add_argument("--window-seconds", type=float, default=WINDOW_S)
    parser.add_argument("--profile", type=Path, help="run ink serve under cProfile, to this file")
    args = parser.parse_args(argv)
    sample = asyncio.run(
        measure_once(
            args.sessions,
            args.stream_seconds,
            args.warmup_seconds,
            args.window_seconds,
            args.profile,
        )
    )
    write_json(args.out, sample)


if __name__ == "__main__":
    main()
