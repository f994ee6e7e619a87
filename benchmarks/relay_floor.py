"""What a streamed delta costs a server that only passes it on: the floor under figure 11.

    python -m benchmarks.relay_floor [--streams 100] [--seconds 8] [--out FILE]

Not a figure with a target: the yardstick for figure 11's `us_per_delta`. A relay on
uvloop (the loop `ink serve` runs on) holds `--streams` TCP connections on loopback
from a "model" process and as many to a "client" process. The model writes to each of
its connections every `TICK_MS` (figure 11's pace: 20 bytes of text a write, about the
size of one SSE event of it), and the relay writes what each read brings, doubled (an
SSE message is about twice its model event), to the matching client connection; the
client reads and drops it. Over a window in the middle, the relay's CPU (user and
system, `time.process_time`) per model write is the least any server in Python pays for one
delta on this host: a network read, its wake-up, one `write` on loopback TCP (which
also runs the receiving side's TCP in the writer's system call), and a `data_received`
callback that does nothing else. `ink serve` spends the rest on HTTP, the agent loop,
the projection, masking, JSON and SSE framing.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import multiprocessing
import selectors
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import uvloop

from benchmarks.common import write_json

STREAMS = 100
TICK_MS = 20
# One model write: an SSE event of about figure 11's 20 bytes of text.
PAYLOAD = b'data: {"choices":[{"delta":{"content":"<t=1796687442.45>"}}]}\n\n'
WARMUP_S = 2.0
WINDOW_S = 8.0


def _model(port: int, streams: int, seconds: float) -> None:
    """Writes PAYLOAD to each connection every TICK_MS, on its own clock."""
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(streams)]
    for conn in conns:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    tick = TICK_MS / 1000
    due = time.monotonic()
    ends = due + seconds
    while due < ends:
        for conn in conns:
            conn.sendall(PAYLOAD)
        due += tick
        time.sleep(max(0.0, due - time.monotonic()))
    for conn in conns:
        conn.close()


def _client(port: int, streams: int) -> None:
    """Reads every connection until each is closed."""
    selector = selectors.DefaultSelector()
    for _ in range(streams):
        conn = socket.create_connection(("127.0.0.1", port))
        conn.setblocking(False)
        selector.register(conn, selectors.EVENT_READ)
    open_conns = streams
    while open_conns:
        for key, _ in selector.select(1.0):
            conn = cast(socket.socket, key.fileobj)
            if not conn.recv(65536):
                selector.unregister(conn)
                conn.close()
                open_conns -= 1


class _Relay(asyncio.Protocol):
    def __init__(
        self, out: asyncio.Transport, counted: Callable[[], None], ended: asyncio.Future[None]
    ) -> None:
        self.out = out
        self.counted = counted
        self.ended = ended

    def data_received(self, data: bytes) -> None:
        self.out.write(data + data)
        self.counted()

    def connection_lost(self, exc: Exception | None) -> None:
        self.out.close()
        self.ended.set_result(None)


async def _relay(
    upstream: list[socket.socket], downstream: list[socket.socket], window: tuple[float, float]
) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    reads = 0

    def counted() -> None:
        nonlocal reads
        reads += 1

    lost: list[asyncio.Future[None]] = []
    for up, down in zip(upstream, downstream, strict=True):
        down.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        out, _ = await loop.connect_accepted_socket(asyncio.Protocol, down)
        ended: asyncio.Future[None] = loop.create_future()
        lost.append(ended)
        await loop.connect_accepted_socket(functools.partial(_Relay, out, counted, ended), up)
    opens, closes = window
    await asyncio.sleep(max(0.0, opens - time.monotonic()))
    cpu0, reads0, wall0 = time.process_time(), reads, time.monotonic()
    await asyncio.sleep(max(0.0, closes - time.monotonic()))
    cpu, count, wall = time.process_time() - cpu0, reads - reads0, time.monotonic() - wall0
    await asyncio.wait_for(asyncio.gather(*lost), 30)
    return {"window_s": wall, "reads": count, "cpu_s": cpu}


def measure(streams: int, seconds: float) -> dict[str, Any]:
    """One relay run of `streams` streams; the window is the middle `seconds`."""
    context = multiprocessing.get_context("spawn")
    with (
        socket.create_server(("127.0.0.1", 0), backlog=streams) as ups,
        socket.create_server(("127.0.0.1", 0), backlog=streams) as downs,
    ):
        stream_s = WARMUP_S + seconds + WARMUP_S
        client = context.Process(target=_client, args=(downs.getsockname()[1], streams))
        client.start()
        downstream = [downs.accept()[0] for _ in range(streams)]
        model = context.Process(target=_model, args=(ups.getsockname()[1], streams, stream_s))
        model.start()
        upstream = [ups.accept()[0] for _ in range(streams)]
        started = time.monotonic()
        window = (started + WARMUP_S, started + WARMUP_S + seconds)
        counts = uvloop.run(_relay(upstream, downstream, window))
        model.join(30)
        client.join(30)
    writes = streams * counts["window_s"] * 1000 / TICK_MS
    return {
        "streams": streams,
        "tick_ms": TICK_MS,
        "window_s": counts["window_s"],
        "model_writes": writes,
        "reads": counts["reads"],
        "cpu_pct": 100 * counts["cpu_s"] / counts["window_s"],
        "us_per_delta": 1e6 * counts["cpu_s"] / writes,
    }


def table(result: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"relay of {result['streams']} streams, a write every {result['tick_ms']} ms each, "
            f"over {result['window_s']:.1f} s:",
            f"  relay CPU        {result['cpu_pct']:.1f} % of one core",
            f"  per model write  {result['us_per_delta']:.1f} µs "
            f"({result['reads']} reads for {result['model_writes']:.0f} writes)",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--streams", type=int, default=STREAMS)
    parser.add_argument("--seconds", type=float, default=WINDOW_S)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result = measure(args.streams, args.seconds)
    print(table(result))
    if args.out is not None:
        write_json(args.out, result)


if __name__ == "__main__":
    main()
