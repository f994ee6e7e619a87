"""Many SSE clients of one `ink serve` in one asyncio loop, and the CPU clocks to watch them.

Figure 11 holds 100 sessions' streams open at once, so the client side must cost little:
each `StreamClient` reads its response with httpx's `aiter_raw()`, stamps every network
read with `time.monotonic()`, and looks into a block only as far as it must: the event
type from the `event:` line, the send-time markers (`benchmarks.stamped_server.MARKER`)
of a `message_update` by one regex over the raw bytes, and JSON only for `agent_settled`.
The clients' own CPU is measured (`process_cpu_s`) and reported beside the server's, so
a reader can see they were not the bottleneck.
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
    """One session's SSE stream: every marker found, as (read time, send time)."""

    session_id: str
    response: httpx.Response
    stamps: list[tuple[float, float]] = field(default_factory=list)
    messages: int = 0
    settled: dict[str, Any] | None = None
    first_delta: asyncio.Event = field(default_factory=asyncio.Event)
    _rest: bytes = b""

    async def run(self) -> None:
        """Read until `agent_settled` (kept in `settled`) or the end of the stream."""
        async for chunk in self.response.aiter_raw():
            at = time.monotonic()
            *complete, self._rest = (self._rest + chunk).split(b"\n\n")
            for block in complete:
                if self._take(block, at):
                    return

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
    """`count` new sessions, each with its SSE stream open (not yet prompted).

    A listener exists once its response's headers are here: nothing of a run is missed."""
    ids = [await new_session(client) for _ in range(count)]
    requests = [client.build_request("GET", f"/api/sessions/{sid}/events") for sid in ids]
    responses = await asyncio.gather(*(client.send(r, stream=True) for r in requests))
    return [StreamClient(sid, response) for sid, response in zip(ids, responses, strict=True)]


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
