"""Many SSE clients of one `ink serve` in one asyncio loop, and the CPU clocks to watch them.

Figure 11 holds 100 sessions' streams open at once, so the client side must cost little:
each `StreamClient` reads its stream straight off a socket of its own (an asyncio
protocol that parses the status line, the headers and the chunked body; not httpx),
stamps every network read with `time.monotonic()` as it arrives, and looks into a block
only as far as it must: the event type from the `event:` line, the send-time markers
(`benchmarks.stamped_server.MARKER`) of a `message_update` by one regex over the raw
bytes, and JSON only for `agent_settled`. The clients' own CPU and loop lag are
measured (`process_cpu_s`, `LoopLag`) and reported beside the server's, so a reader can
see they were not the bottleneck.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.stamped_server import MARKER

PROMPT = "Write the long answer."


@dataclass
class StreamClient:
    """One session's SSE stream: every marker found, as (read time, send time).

    Read straight off the socket (`_Wire`, an asyncio protocol: HTTP/1.1 headers, then
    the chunked body), each read stamped as it arrives. httpx's `aiter_raw()` cost the
    100 streams of figure 11 about half a core and stamped reads up to a hundred ms
    late (its own loop's lag, `client_lag_p99_ms`), which the figure then counted as
    the server's."""

    session_id: str
    stamps: list[tuple[float, float]] = field(default_factory=list)
    messages: int = 0
    settled: dict[str, Any] | None = None
    first_delta: asyncio.Event = field(default_factory=asyncio.Event)
    _rest: bytes = b""
    _wire: _Wire | None = None

    async def run(self) -> None:
        """Read until `agent_settled` (kept in `settled`) or the end of the stream."""
        assert self._wire is not None, "opened by open_streams()"
        await self._wire.ended

    async def aclose(self) -> None:
        if self._wire is not None:
            self._wire.close()

    def feed(self, body: bytes, at: float) -> bool:
        """Body bytes read at `at`; True once `agent_settled` was read."""
        *complete, self._rest = (self._rest + body).split(b"\n\n")
        return any(self._take(block, at) for block in complete)

    def _take(self, block: bytes, at: float) -> bool:
        # "id: N\nevent: TYPE\ndata: JSON" (serve/events_stream.py); comments are keep-alives.
        lines = block.split(b"\n", 2)
        if len(lines) < 3 or not lines[1].startswith(b"event: "):
            return False
        self.messages += 1
        kind = lines[1][7:]
        if kind == b"message_update":
            found = MARKER.findall(lines[2])
            if found:
                self.stamps.extend((at, float(sent)) for sent in found)
                self.first_delta.set()
        elif kind == b"agent_settled":
            self.settled = json.loads(lines[2][6:])
            return True
        return False


class _Wire(asyncio.Protocol):
    """One `GET .../events` on a connection of its own: the status line and headers
    (`headers` resolves once they are here), then the chunked body to the reader."""

    def __init__(self, reader: StreamClient) -> None:
        loop = asyncio.get_running_loop()
        self.reader = reader
        self.headers: asyncio.Future[None] = loop.create_future()
        self.ended: asyncio.Future[None] = loop.create_future()
        self.transport: asyncio.Transport | None = None
        self._buffer = b""
        self._chunk_left = 0  # body bytes left in the current chunk, then its CRLF

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        at = time.monotonic()
        if self.ended.done():
            return  # after the body's last chunk (or once closed): nothing more to read
        self._buffer += data
        if not self.headers.done():
            head, found, self._buffer = self._buffer.partition(b"\r\n\r\n")
            if not found:
                self._buffer = head
                return
            status = head.split(b"\r\n", 1)[0]
            if b" 200 " not in status + b" " or b"chunked" not in head.lower():
                self.headers.set_exception(RuntimeError(f"events stream: {head[:200]!r}"))
                self.close()
                return
            self.headers.set_result(None)
        body = self._dechunk()
        if body and self.reader.feed(body, at):
            self.close()

    def _dechunk(self) -> bytes:
        out: list[bytes] = []
        buffer = self._buffer
        while buffer:
            if self._chunk_left:
                take = buffer[: self._chunk_left]
                buffer = buffer[len(take) :]
                # Of what is left of the chunk, all but its last two bytes (CRLF) is data.
                out.append(take[: max(0, self._chunk_left - 2)])
                self._chunk_left -= len(take)
                continue
            line, found, rest = buffer.partition(b"\r\n")
            if not found:
                break
            size = int(line.split(b";", 1)[0], 16)
            buffer = rest
            if size == 0:
                self.close()
                break
            self._chunk_left = size + 2
        self._buffer = buffer
        return b"".join(out)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.headers.done():
            self.headers.set_exception(exc or RuntimeError("events stream closed"))
        if not self.ended.done():
            self.ended.set_result(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        if not self.ended.done():
            self.ended.set_result(None)


async def new_session(client: httpx.AsyncClient) -> str:
    response = await client.post("/api/sessions", json={})
    if response.status_code != 201:
        raise RuntimeError(f"POST /api/sessions: {response.status_code} {response.text}")
    return str(response.json()["session"]["session_id"])


async def prompt(client: httpx.AsyncClient, session_id: str) -> None:
    response = await client.post(f"/api/sessions/{session_id}/messages", json={"text": PROMPT})
    if response.status_code != 202:
        raise RuntimeError(f"POST messages: {response.status_code} {response.text}")


async def open_streams(client: httpx.AsyncClient, count: int) -> list[StreamClient]:
    """`count` new sessions, each with its SSE stream open (not yet prompted), on
    `client`'s server and with its headers (the token).

    A listener exists once its response's headers are here: nothing of a run is missed."""
    ids = [await new_session(client) for _ in range(count)]
    return list(await asyncio.gather(*(open_stream(client, sid) for sid in ids)))


async def open_stream(client: httpx.AsyncClient, session_id: str) -> StreamClient:
    url = client.base_url
    port = url.port or 80
    path = f"{url.path.rstrip('/')}/api/sessions/{session_id}/events"
    headers = "".join(
        f"{name}: {value}\r\n"
        for name, value in client.headers.items()
        if name.lower() in ("authorization", "cookie")
    )
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {url.host}:{port}\r\n{headers}"
        "Accept: text/event-stream\r\n\r\n"
    )
    reader = StreamClient(session_id)
    loop = asyncio.get_running_loop()
    _, wire = await loop.create_connection(lambda: _Wire(reader), url.host, port)
    reader._wire = wire
    assert wire.transport is not None
    wire.transport.write(request.encode())
    await wire.headers
    return reader


def process_cpu_s(pid: int) -> float:
    """A process's CPU time so far (user + system, all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def vm_kib(pid: int, name: str) -> int:
    """One `/proc/<pid>/status` line in KiB: `VmRSS`, `VmHWM`."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {name} in /proc/{pid}/status")


@dataclass
class LoopLag:
    """How late this event loop runs a 10 ms timer: if the clients' loop lags, the
    latency it stamps is its own, not the server's."""

    lags_ms: list[float] = field(default_factory=list)

    async def run(self, until: float) -> None:
        while (now := time.monotonic()) < until:
            await asyncio.sleep(0.010)
            self.lags_ms.append((time.monotonic() - now - 0.010) * 1000)
