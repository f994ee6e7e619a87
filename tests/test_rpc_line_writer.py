"""RPC mode's `LineWriter`: every line intact and in order, few writes while streaming,
and no line held back after a quiet moment or at the end."""

from __future__ import annotations

import asyncio
import io
import json

from ink_tui.modes.rpc_mode import LineWriter


class _Pipe(io.RawIOBase):
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes.append(bytes(data))
        return len(data)

    def lines(self) -> list[dict[str, object]]:
        text = b"".join(self.writes).decode()
        assert text.endswith("\n")
        return [json.loads(line) for line in text.splitlines()]


async def test_a_line_after_a_quiet_moment_goes_out_on_the_next_turn() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe, gap=10.0)  # a gap no test waits out
    writer.send({"type": "first", "text": "é\n"})
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert pipe.lines() == [{"type": "first", "text": "é\n"}]


async def test_a_stream_of_lines_is_gathered_into_few_writes() -> None:
    pipe = _Pipe()
    # The sends take milliseconds; a gap far longer keeps them within it even when the
    # machine is busy. The wait outlasts the gap: the write due by then (a timer of the
    # same loop, due earlier) has surely run.
    writer = LineWriter(pipe, gap=0.25)
    for n in range(100):
        writer.send({"n": n})
        if n % 10 == 9:
            await asyncio.sleep(0.001)
    await asyncio.sleep(0.3)
    assert [line["n"] for line in pipe.lines()] == list(range(100))
    # The first line alone, the rest within the gap together: nowhere near one per line.
    assert len(pipe.writes) <= 3


async def test_flush_writes_what_waits_once() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe, gap=0.05)
    writer.send({"n": 1})
    await asyncio.sleep(0.001)
    writer.send({"n": 2})  # waits for the gap
    writer.flush()  # the end: written now, and the scheduled write has nothing left
    await asyncio.sleep(0.1)
    assert pipe.lines() == [{"n": 1}, {"n": 2}]
    assert len(pipe.writes) == 2
