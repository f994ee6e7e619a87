"""Figure 7, `ink serve`: events per second to one SSE client, and 20 sessions at once.

Both drive a real `ink serve` process (`python -m ink_tui serve --port 0`, an empty home
and workspace, `--base-url` to the loopback model server of `benchmarks.stamped_server`),
found through the token in the one line it prints. The client is httpx in this process,
reading the SSE body with `aiter_raw()`, splitting messages on the blank line and
stamping each with `time.monotonic()` as its network read returns.

- Events per second (target >= 2,000/s), two ways, one session each, listened to on
  `GET /api/sessions/{id}/events` (opened before the prompt is posted):
  - Tool events (the target): the model asks for `TOOL_CALLS` `ls` calls in one reply
    (read-only, so the scheduler runs 5 at a time), then answers briefly. Each call is
    four events (`tool_execution_start`, `_running`, `_settled`, `_end`) and none is
    ever merged, so every event is an SSE message of its own. Counted: the SSE messages
    the client reads after the first `tool_execution_start` up to `agent_settled`
    (included), over the time between those two reads. It includes what the server does
    for them: run the tools, project, redact, buffer for replay, encode and write (and
    one more model request).
  - Text (information): the model server sends a 64 KB answer with every 4-character
    SSE delta in a write and HTTP chunk of its own (`TCP_NODELAY`), `EACH_RATE` a
    second (`/each/`, as a real server streams). The protocol merges `message_update`
    events waiting for one client into one SSE message (at most one write per 16 ms
    while text streams, docs/serve.md), which carries the range `seq_first..seq`; so
    this counts by seq: the session's public events from the first `message_update` the
    client reads (its own excluded) to `agent_settled`, over the time between the two
    reads. Each of them was produced by the session (one per network batch the provider
    read), redacted, buffered and delivered, its text included; the ranges are checked
    to follow one another with no gap and the text to add up to the whole answer. Beside
    it: the rate offered (the model server's first to last byte) and the SSE messages
    per second. The offer is 4,000/s, twice the target: at figure 6's 20,000/s the
    provider's parse of one HTTP chunk per delta (h11) takes a core on this 2-core box
    beside the pacing server, the provider reads ever bigger batches and the count by
    seq falls to a few hundred a second (figure 6 measures that side).
- 20 sessions at 8 KB/s each (targets: p99 <= 50 ms, server RSS <= 300 MiB): 20
  sessions, each with its SSE stream open, get a prompt at once. Each model stream
  writes every 10 ms one HTTP chunk of 4-character SSE deltas (`stamped_server`) that
  starts with a marker `<t=SECONDS>`, its send time (`time.monotonic()`, one clock on
  Linux), 8 KB/s of text in all, for `LATENCY_S` seconds. The latency is, for every
  marker the client finds in a `message_update`, the client's read time minus the
  marker: model server's write -> ink's provider -> session -> SSE -> the client's
  read, including the up-to-16 ms merge window of the protocol. p50 and p99 over every
  marker of every session; baseline, just before in a server of its own: one session
  alone. The RSS is the server's peak (`VmHWM` of `/proc/<pid>/status`) once all 20
  have settled; baseline: the same at start, idle.

`--profile DIR` runs the `ink serve` processes under cProfile (`DIR/tools.prof`,
`DIR/throughput.prof`, `DIR/latency.prof`), written when the server exits on SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.answer import deltas, make_answer
from benchmarks.common import (
    Sample,
    interruptible,
    median,
    percentile,
    run_child,
    start_ink,
    write_json,
)
from benchmarks.loopback import last_record
from benchmarks.stamped_server import MARKER, StampedServer, each_url, stamped_url, tools_url

TOOL_CALLS = 2000
QUICK_TOOL_CALLS = 50
EACH_SIZE = 64 * 1024
QUICK_EACH_SIZE = 8 * 1024
EACH_RATE = 4_000
SESSIONS = 20
QUICK_SESSIONS = 3
RATE = 8 * 1024
TICK_MS = 10
LATENCY_S = 8.0
QUICK_LATENCY_S = 0.5
BASELINE_S = 4.0
TIMEOUT_S = 120.0
PROMPT = "Write the long answer."


@dataclass
class Message:
    """One SSE message as the client read it."""

    at: float
    type: str
    seq: int
    data: bytes

    def json(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.data)
        return parsed


@dataclass
class SseReader:
    """The messages of one SSE response, read with `aiter_raw` and stamped per read."""

    response: httpx.Response
    messages: list[Message] = field(default_factory=list)
    _rest: bytes = b""

    async def read_until(self, kind: str, within: float) -> Message:
        async def read() -> Message:
            async for chunk in self.response.aiter_raw():
                at = time.monotonic()
                found = self._take(self._rest + chunk, at, kind)
                if found is not None:
                    return found
            raise RuntimeError(f"the SSE stream ended before {kind}")

        return await asyncio.wait_for(read(), within)

    def _take(self, data: bytes, at: float, kind: str) -> Message | None:
        *complete, self._rest = data.split(b"\n\n")
        found = None
        for block in complete:
            fields: dict[bytes, bytes] = {}
            for line in block.split(b"\n"):
                if line and not line.startswith(b":"):
                    name, _, value = line.partition(b": ")
                    fields[name] = value
            if b"data" not in fields:
                continue  # a keep-alive comment
            message = Message(at, fields[b"event"].decode(), int(fields[b"id"]), fields[b"data"])
            self.messages.append(message)
            if found is None and message.type == kind:
                found = message
        return found


class InkServe:
    """A real `ink serve` with its own empty home and workspace."""

    def __init__(self, url: str, tmp: Path, profile: Path | None) -> None:
        self.proc = start_ink(
            [
                *("serve", "--port", "0", "-C", str(tmp / "workspace")),
                *("--base-url", url, "--model", "bench-model", "--api-key", "bench-key"),
            ],
            tmp,
            profile,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,
        )
        self.base = ""
        self.token = ""

    async def started(self) -> None:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 30)
        if not line.startswith("ink serve: http://"):
            raise RuntimeError(f"ink serve did not start: {line!r}{self._stderr()}")
        self.base, _, self.token = line.split(" ", 2)[2].strip().partition("/?token=")

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.base,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=TIMEOUT_S,
            limits=httpx.Limits(max_connections=200),
        )

    def peak_rss_mib(self) -> float:
        """The server's peak resident set size (VmHWM) so far."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM in /proc/<pid>/status")

    def cpu_s(self) -> float:
        """The server's CPU time so far (user + system), in seconds."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def runqueue_s(self) -> float:
        """Time the server's threads were runnable but waited for a CPU (schedstat)."""
        total = 0
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[1])
        return total / 1e9

    def close(self) -> None:
        """Ctrl+C (so that a profile is written), then wait for exit status 130."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        if code not in (0, 130):
            raise RuntimeError(f"ink serve exited with {code}:{self._stderr()}")

    def _stderr(self) -> str:
        assert self.proc.stderr is not None
        if self.proc.poll() is None:
            return ""
        return "\n" + self.proc.stderr.read()[-4000:]


async def _new_session(client: httpx.AsyncClient) -> str:
    response = await client.post("/api/sessions", json={})
    if response.status_code != 201:
        raise RuntimeError(f"POST /api/sessions: {response.status_code} {response.text}")
    return str(response.json()["session"]["session_id"])


async def _prompt(client: httpx.AsyncClient, session_id: str) -> None:
    response = await client.post(f"/api/sessions/{session_id}/messages", json={"text": PROMPT})
    if response.status_code != 202:
        raise RuntimeError(f"POST messages: {response.status_code} {response.text}")


async def _run_sessions(client: httpx.AsyncClient, count: int) -> list[SseReader]:
    """`count` new sessions, each listened to, prompted at once, read until settled."""
    ids = [await _new_session(client) for _ in range(count)]
    requests = [client.build_request("GET", f"/api/sessions/{sid}/events") for sid in ids]
    # The listener exists once the headers are here: nothing of the run can be missed.
    responses = await asyncio.gather(*(client.send(r, stream=True) for r in requests))
    try:
        readers = [SseReader(response) for response in responses]
        await asyncio.gather(*(_prompt(client, sid) for sid in ids))
        settled = await asyncio.gather(
            *(reader.read_until("agent_settled", TIMEOUT_S) for reader in readers)
        )
    finally:
        await asyncio.gather(*(response.aclose() for response in responses))
    for message in settled:
        stop = message.json().get("stop_reason")
        if stop != "completed":
            raise RuntimeError(f"a run did not complete: {message.json()}")
    for sid in ids:
        await client.delete(f"/api/sessions/{sid}")
    return readers


def count_events(messages: list[Message]) -> dict[str, Any]:
    """Events by seq from the first message_update's read to agent_settled's (see the
    module), checking that the seq ranges follow one another."""
    first = next(i for i, m in enumerate(messages) if m.type == "message_update")
    last = next(i for i, m in enumerate(messages) if m.type == "agent_settled")
    previous = messages[first - 1].seq if first else None
    text = 0
    for message in messages[first : last + 1]:
        data = message.json()
        start = int(data.get("seq_first", data["seq"]))
        if previous is not None and start != previous + 1:
            raise RuntimeError(f"events {previous + 1}..{start - 1} never reached the client")
        previous = message.seq
        if message.type == "message_update":
            text += len(data["delta"]["text"].encode())
    seconds = messages[last].at - messages[first].at
    events = messages[last].seq - messages[first].seq
    sse = last - first
    return {
        "events": events,
        "sse_messages": sse,
        "seconds": seconds,
        "events_per_s": events / seconds,
        "sse_per_s": sse / seconds,
        "text_bytes": text,
    }


async def measure_throughput(root: str, size: int, rate: int, profile: Path | None) -> Sample:
    url = each_url(root, size, rate)
    with tempfile.TemporaryDirectory(prefix="ink-bench-serve-") as tmp:
        server = InkServe(url, Path(tmp), profile)
        try:
            await server.started()
            async with server.client() as client:
                (reader,) = await _run_sessions(client, 1)
        finally:
            server.close()
    counted = count_events(reader.messages)
    if counted["text_bytes"] != size:
        raise RuntimeError(f"the client got {counted['text_bytes']} bytes of text, not {size}")
    path = f"/each/{size}/{rate}/"
    first, last = last_record(root, "first_byte", path), last_record(root, "last_byte", path)
    offered = None
    if first is not None and last is not None and last["t"] > first["t"]:
        offered = len(deltas(make_answer(size))) / (last["t"] - first["t"])
    return {**counted, "size": size, "rate": rate, "offered_per_s": offered}


def count_tool_events(messages: list[Message]) -> dict[str, Any]:
    """SSE messages from the first tool_execution_start's read to agent_settled's."""
    first = next(i for i, m in enumerate(messages) if m.type == "tool_execution_start")
    last = next(i for i, m in enumerate(messages) if m.type == "agent_settled")
    for before, message in zip(messages[first:last], messages[first + 1 : last + 1], strict=True):
        start = int(message.json().get("seq_first", message.seq))
        if start != before.seq + 1:
            raise RuntimeError(f"events {before.seq + 1}..{start - 1} never reached the client")
    seconds = messages[last].at - messages[first].at
    sse = last - first
    return {
        "events": messages[last].seq - messages[first].seq,
        "sse_messages": sse,
        "seconds": seconds,
        "sse_per_s": sse / seconds,
        "tool_ends": sum(m.type == "tool_execution_end" for m in messages),
    }


async def measure_tools(root: str, calls: int, profile: Path | None) -> Sample:
    with tempfile.TemporaryDirectory(prefix="ink-bench-serve-") as tmp:
        server = InkServe(tools_url(root, calls), Path(tmp), profile)
        try:
            await server.started()
            async with server.client() as client:
                (reader,) = await _run_sessions(client, 1)
        finally:
            server.close()
    counted = count_tool_events(reader.messages)
    if counted["tool_ends"] != calls:
        raise RuntimeError(f"{counted['tool_ends']} of {calls} tool calls ended")
    return {**counted, "calls": calls}


def latencies_ms(readers: list[SseReader]) -> list[float]:
    """For every marker in a message_update: read time minus send time, in ms."""
    out = []
    for reader in readers:
        for message in reader.messages:
            if message.type == "message_update":
                out.extend((message.at - float(t)) * 1000 for t in MARKER.findall(message.data))
    return out


async def measure_latency(
    root: str, sessions: int, seconds: float, baseline_s: float, profile: Path | None
) -> Sample:
    url = stamped_url(root, seconds, RATE, TICK_MS)
    base_url = stamped_url(root, baseline_s, RATE, TICK_MS)
    with tempfile.TemporaryDirectory(prefix="ink-bench-serve-") as tmp:
        # The baseline first, in a server of its own (the answer's length is per server).
        alone = InkServe(base_url, Path(tmp), None)
        try:
            await alone.started()
            async with alone.client() as client:
                baseline = latencies_ms(await _run_sessions(client, 1))
        finally:
            alone.close()
    with tempfile.TemporaryDirectory(prefix="ink-bench-serve-") as tmp:
        server = InkServe(url, Path(tmp), profile)
        try:
            await server.started()
            idle_rss = server.peak_rss_mib()
            async with server.client() as client:
                started, cpu, waited = time.monotonic(), server.cpu_s(), server.runqueue_s()
                readers = await _run_sessions(client, sessions)
                wall, cpu = time.monotonic() - started, server.cpu_s() - cpu
                waited = server.runqueue_s() - waited
            peak_rss = server.peak_rss_mib()
        finally:
            server.close()
    samples = latencies_ms(readers)
    expected = sessions * round(seconds * 1000 / TICK_MS)
    if len(samples) != expected:
        raise RuntimeError(f"found {len(samples)} markers, not {expected}")
    return {
        "sessions": sessions,
        "markers": len(samples),
        "p50_ms": percentile(samples, 50),
        "p99_ms": percentile(samples, 99),
        "max_ms": max(samples),
        "alone_p50_ms": percentile(baseline, 50),
        "alone_p99_ms": percentile(baseline, 99),
        "idle_rss_mib": idle_rss,
        "peak_rss_mib": peak_rss,
        "wall_s": wall,
        "server_cpu_share": cpu / wall,
        # A share of the wall time the server was ready to run but had no CPU (the other
        # processes of the benchmark, and whatever else runs on the machine).
        "server_runqueue_share": waited / wall,
    }


async def measure_both(args: argparse.Namespace) -> Sample:
    profile: Path | None = args.profile
    tools = await measure_tools(args.root, args.tool_calls, profile and profile / "tools.prof")
    throughput = await measure_throughput(
        args.root, args.each_size, args.each_rate, profile and profile / "throughput.prof"
    )
    latency = await measure_latency(
        args.root,
        args.sessions,
        args.seconds,
        args.baseline_seconds,
        profile and profile / "latency.prof",
    )
    return {"tools": tools, "throughput": throughput, "latency": latency}


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    if quick:
        sizes = ["--each-size", str(QUICK_EACH_SIZE), "--sessions", str(QUICK_SESSIONS)]
        sizes += ["--tool-calls", str(QUICK_TOOL_CALLS)]
        sizes += ["--seconds", str(QUICK_LATENCY_S), "--baseline-seconds", str(QUICK_LATENCY_S)]
    else:
        sizes = []
    with StampedServer() as server:
        args = ["--root", server.root, *sizes]
        return {"ink": [run_child("fig7_serve", args) for _ in range(runs)]}


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    tools = [run["tools"] for run in runs]
    put = [run["throughput"] for run in runs]
    lat = [run["latency"] for run in runs]
    offered = [run["offered_per_s"] for run in put if run["offered_per_s"] is not None]
    return {
        "tool_calls": tools[0]["calls"],
        "tool_events_per_s": median([run["sse_per_s"] for run in tools]),
        "serve_each_rate": put[0]["rate"],
        "each_size_kb": put[0]["size"] / 1024,
        "events_per_s": median([run["events_per_s"] for run in put]),
        "offered_per_s": median(offered),
        "sse_per_s": median([run["sse_per_s"] for run in put]),
        "events_per_sse": median([run["events"] / run["sse_messages"] for run in put]),
        "serve_sessions": lat[0]["sessions"],
        "rate_kbps": RATE / 1024,
        "p50_ms": median([run["p50_ms"] for run in lat]),
        "p99_ms": median([run["p99_ms"] for run in lat]),
        "max_ms": median([run["max_ms"] for run in lat]),
        "alone_p50_ms": median([run["alone_p50_ms"] for run in lat]),
        "alone_p99_ms": median([run["alone_p99_ms"] for run in lat]),
        "peak_rss_mib": median([run["peak_rss_mib"] for run in lat]),
        "idle_rss_mib": median([run["idle_rss_mib"] for run in lat]),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--root", required=True, help="the stamped server's root URL")
    parser.add_argument("--tool-calls", type=int, default=TOOL_CALLS, help="ls calls at once")
    parser.add_argument("--each-size", type=int, default=EACH_SIZE, help="answer bytes")
    parser.add_argument("--each-rate", type=int, default=EACH_RATE, help="SSE deltas/s")
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--seconds", type=float, default=LATENCY_S, help="stream per session")
    parser.add_argument("--baseline-seconds", type=float, default=BASELINE_S)
    parser.add_argument("--profile", type=Path, help="run ink serve under cProfile, into this dir")
    args = parser.parse_args(argv)
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    write_json(args.out, asyncio.run(measure_both(args)))


if __name__ == "__main__":
    main()
