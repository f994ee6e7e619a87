"""How fast the provider alone takes in a streamed answer, next to raw httpx on the same stream.

The loopback server (`benchmarks.loopback`) streams the answer as fast as the socket takes
it, one SSE event per 4 characters, each in its own HTTP chunk. Two readers, in one process
with the server in its own:

- `raw httpx`: `aiter_bytes()` on the response and nothing else. No parsing at all, so it
  is the ceiling any provider built on httpx can reach.
- `provider`: `OpenAICompatProvider.stream()` to its end, counting the text it
  yields (SSE parsing, JSON, the reply builder and the abort guard all included).

Rates are KB of *answer text* per second (the bytes on the wire are about 30 times more),
timed from sending the request to the end of the body. `events` is how many items each
reader saw: HTTP chunks for httpx, text events for the provider (fewer once deltas that
arrive together are merged).

    python -m benchmarks.provider_speed [--size BYTES] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from benchmarks.answer import make_answer
from benchmarks.common import median
from benchmarks.loopback import LoopbackServer
from ink_tui.core.abort import AbortController
from ink_tui.core.messages import UserMessage
from ink_tui.core.provider_api import ModelRequest, TextChunk
from ink_tui.providers.openai_compat import OpenAICompatProvider

DEFAULT_SIZE = 200 * 1024
DEFAULT_RUNS = 5
MODEL = "bench-model"


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    events: int


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    runs: list[Run]
    size: int

    def kbps(self) -> list[float]:
        return [self.size / 1024 / run.seconds for run in self.runs]


async def read_raw(client: httpx.AsyncClient, base_url: str, size: int) -> Run:
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "go"}]}
    events = 0
    started = time.perf_counter()
    async with client.stream("POST", f"{base_url}/chat/completions", json=body) as response:
        async for _ in response.aiter_bytes():
            events += 1
    return Run(time.perf_counter() - started, events)


async def read_provider(provider: OpenAICompatProvider, size: int) -> Run:
    request = ModelRequest("You are a benchmark.", [UserMessage("go")])
    events = 0
    parts: list[str] = []
    started = time.perf_counter()
    async for event in provider.stream(request, AbortController().signal):
        if isinstance(event, TextChunk):
            events += 1
            parts.append(event.text)
    seconds = time.perf_counter() - started
    # A fast but wrong reader is no result: the text must be the whole answer, in order.
    if "".join(parts) != make_answer(size):
        raise RuntimeError("the provider's text is not the answer the server sent")
    return Run(seconds, events)


async def measure(base_url: str, size: int, runs: int) -> list[Row]:
    async with httpx.AsyncClient(timeout=60.0) as client:
        provider = OpenAICompatProvider(base_url, MODEL, None, client=client)
        readers: list[tuple[str, Callable[[], Awaitable[Run]]]] = [
            ("raw httpx (aiter_bytes)", lambda: read_raw(client, base_url, size)),
            ("provider stream", lambda: read_provider(provider, size)),
        ]
        results: dict[str, list[Run]] = {name: [] for name, _ in readers}
        await readers[0][1]()  # warm up: connection, caches, the server's encoded answer
        # Interleaved, so a noisy moment on the machine hurts both readers alike.
        for _ in range(runs):
            for name, read in readers:
                results[name].append(await read())
    return [Row(name, results[name], size) for name, _ in readers]


def format_table(rows: list[Row]) -> str:
    lines = [f"{'reader':<26}{'median KB/s':>12}{'best KB/s':>11}{'events':>9}"]
    for row in rows:
        rates = row.kbps()
        events = int(median([run.events for run in row.runs]))
        lines.append(f"{row.name:<26}{median(rates):>12.0f}{max(rates):>11.0f}{events:>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="answer size in bytes")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    args = parser.parse_args(argv)
    with LoopbackServer((args.size,)) as server:
        rows = asyncio.run(measure(server.fast_url(args.size), args.size, args.runs))
    print(f"{args.size / 1024:.0f} KB answer, 4-byte deltas, {args.runs} runs each")
    print(format_table(rows))


if __name__ == "__main__":
    main()
