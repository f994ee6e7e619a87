"""RPC mode's `LineWriter`: every line intact and in order whatever `write(2)` does, few
writes while streaming, no line held back after a quiet moment or at the end, strict
JSON out, and a reader that stays away costs merged deltas, then a said drop."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from ink_tui.modes.rpc_writer import LineWriter


def _strict(line: str) -> dict[str, Any]:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in a protocol line: {line[:200]}")

    value = json.loads(line, parse_constant=refuse)
    assert isinstance(value, dict)
    return value


class _Pipe:
    """A raw file: records each write; `short` makes each write take at most that many
    bytes, and `trouble` makes some calls fail as a signal or a full pipe would."""

    def __init__(self, short: int | None = None, trouble: bool = False) -> None:
        self.writes: list[bytes] = []
        self.calls = 0
        self._short = short
        self._trouble = trouble
        self.open = threading.Event()
        self.open.set()

    def write(self, data: memoryview) -> int | None:
        self.open.wait(30)
        self.calls += 1
        if self._trouble:
            if self.calls % 3 == 0:
                raise InterruptedError(4, "Interrupted system call")
            if self.calls % 5 == 0:
                raise BlockingIOError(11, "Resource temporarily unavailable")
            if self.calls % 7 == 0:
                return None
        taken = bytes(data[: self._short] if self._short else data)
        self.writes.append(taken)
        return len(taken)

    def lines(self) -> list[dict[str, Any]]:
        text = b"".join(self.writes).decode()
        assert text.endswith("\n")
        return [_strict(line) for line in text.splitlines()]


def test_a_line_after_a_quiet_moment_goes_out_at_once() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe, gap=10.0)  # a gap no test waits out
    started = time.monotonic()
    writer.send({"type": "first", "text": "é\n"})
    assert writer.close(30)
    assert time.monotonic() - started < 10
    assert pipe.lines() == [{"type": "first", "text": "é\n"}]


def test_a_stream_of_lines_is_gathered_into_few_writes() -> None:
    pipe = _Pipe()
    # The sends take milliseconds; a gap far longer keeps them within it even when the
    # machine is busy.
    writer = LineWriter(pipe, gap=0.5)
    for n in range(100):
        writer.send({"n": n})
    assert writer.close(30)
    assert [line["n"] for line in pipe.lines()] == list(range(100))
    # The first line alone, the rest within the gap together: nowhere near one per line.
    assert len(pipe.writes) <= 3


def test_short_writes_and_interrupted_ones_never_cut_a_line() -> None:
    pipe = _Pipe(short=7, trouble=True)
    writer = LineWriter(pipe, gap=0.0)
    sent = [{"type": "event", "seq": n, "text": "x" * (n % 50) + "é☃"} for n in range(1, 400)]
    for event in sent:
        writer.send(event)
    assert writer.close(30)
    assert pipe.lines() == sent
    assert all(len(write) <= 7 for write in pipe.writes)


def test_a_real_pipe_filled_to_the_brim_gets_every_line_whole() -> None:
    import os

    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # EAGAIN as soon as the pipe is full
    writer = LineWriter(write_end, gap=0.0)
    sent = [{"type": "event", "seq": n, "text": "y" * 900} for n in range(1, 2001)]
    for event in sent:  # ~2 MB: the pipe holds 64 KiB, the writer waits for room
        writer.send(event)
    got = bytearray()
    reading = threading.Thread(target=lambda: _read_all(read_end, got))
    reading.start()
    assert writer.close(30)
    os.close(write_end)
    reading.join(30)
    os.close(read_end)
    assert [_strict(line) for line in got.decode().splitlines()] == sent


def _read_all(fd: int, into: bytearray) -> None:
    import os

    time.sleep(0.05)  # let the pipe fill first: the writer meets EAGAIN
    while chunk := os.read(fd, 1 << 16):
        into += chunk


def test_non_finite_floats_go_out_as_strings() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe)
    writer.send({"type": "tool_execution_start", "arguments": {"x": float("nan")}})
    writer.send({"type": "response", "id": float("inf"), "data": [float("-inf"), 1.5]})
    assert writer.close(30)
    assert pipe.lines() == [
        {"type": "tool_execution_start", "arguments": {"x": "NaN"}},
        {"type": "response", "id": "Infinity", "data": ["-Infinity", 1.5]},
    ]


def test_a_line_that_is_not_json_at_all_is_said_not_dropped() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe)
    cycle: list[Any] = []
    cycle.append(cycle)
    writer.send({"type": "response", "id": "7", "command": "x", "data": cycle})
    writer.send({"type": "after"})
    assert writer.close(30)
    first, after = pipe.lines()
    assert first["id"] == "7" and first["success"] is False
    assert "could not be written as JSON" in first["error"]
    assert after == {"type": "after"}


def _delta(seq: int, text: str, kind: str = "text", run: str = "run-1") -> dict[str, Any]:
    return {
        "type": "message_update",
        "v": 1,
        "session_id": "s",
        "seq": seq,
        "run_id": run,
        "delta": {"type": kind, "text": text},
    }


def _covered(lines: list[dict[str, Any]]) -> list[int]:
    seqs: list[int] = []
    for line in lines:
        if line["type"] == "output_dropped":
            seqs.extend(range(line["seq_first"], line["seq_last"] + 1))
        elif "seq" in line:
            seqs.extend(range(line.get("seq_first", line["seq"]), line["seq"] + 1))
    return seqs


def test_a_reader_that_stays_away_gets_merged_deltas_then_a_said_drop() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe, gap=0.0, behind_bytes=2000, delta_limit_bytes=20_000)
    pipe.open.clear()  # the reader pauses
    seq = 0
    events: list[dict[str, Any]] = []

    def send(event: dict[str, Any]) -> None:
        events.append(event)
        writer.send(event)

    for n in range(40):  # behind after a few: the rest merge
        seq += 1
        send(_delta(seq, f"t{n}," * 20))
    send({"type": "response", "id": "r", "success": True})  # never merged or dropped
    for n in range(30):
        seq += 1
        send(_delta(seq, f"k{n}.", kind="thinking"))
    for _ in range(400):  # far past the limit: dropped, and said
        seq += 1
        send(_delta(seq, "z" * 100))
    seq += 1
    send({"type": "message_end", "v": 1, "session_id": "s", "seq": seq, "run_id": "run-1"})
    seq += 1
    send({"type": "agent_settled", "v": 1, "session_id": "s", "seq": seq, "run_id": None})
    pipe.open.set()
    assert writer.close(30)
    lines = pipe.lines()
    # Far fewer lines than the 472 events sent. How many went out whole depends on how
    # much the writer's thread took in its first go, before its write blocked.
    assert len(lines) < 40
    assert _covered(lines) == list(range(1, seq + 1))
    kept = [line for line in lines if line["type"] != "message_update"]
    # One drop line for each stretch the writer's thread found over the limit: how many
    # depends on when it ran between the sends.
    kinds = [line["type"] for line in kept]
    assert kinds[0] == "response" and kinds[-2:] == ["message_end", "agent_settled"]
    drops = kept[1:-2]
    assert drops and all(line["type"] == "output_dropped" for line in drops)
    for dropped in drops:
        assert dropped["count"] == dropped["seq_last"] - dropped["seq_first"] + 1
        assert "message_end and get_messages hold the whole text" in dropped["reason"]
    dropped_seqs = {n for line in drops for n in range(line["seq_first"], line["seq_last"] + 1)}
    # What was written adds up: every text and thinking delta not dropped, in order.
    for kind in ("text", "thinking"):
        written = "".join(
            line["delta"]["text"]
            for line in lines
            if line["type"] == "message_update" and line["delta"]["type"] == kind
        )
        expected = "".join(
            e["delta"]["text"]
            for e in events
            if e["type"] == "message_update"
            and e["delta"]["type"] == kind
            and e["seq"] not in dropped_seqs
        )
        assert written == expected and written
    assert any("seq_first" in line for line in lines)


def test_a_reader_that_keeps_up_gets_every_delta_as_it_was() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe, gap=0.0)
    sent = [_delta(n, f"piece {n} ") for n in range(1, 200)]
    for event in sent:
        writer.send(event)
    assert writer.close(30)
    assert pipe.lines() == sent


def _pi_delta(index: int, text: str, kind: str = "text_delta") -> dict[str, Any]:
    inner = {"type": kind, "contentIndex": index, "delta": text}
    return {"type": "message_update", "usage": {}, "assistantMessageEvent": inner}


def test_pi_deltas_merge_for_a_reader_that_stays_away_and_are_never_dropped() -> None:
    pipe = _Pipe()
    writer = LineWriter(pipe, gap=0.0, behind_bytes=2000, delta_limit_bytes=20_000)
    pipe.open.clear()  # the reader pauses
    sent: list[dict[str, Any]] = []
    for n in range(300):  # past the limit: still merged, not dropped
        sent.append(_pi_delta(0, f"t{n}," * 20))
    sent.append(_pi_delta(1, "thinking", kind="thinking_delta"))
    sent.append({"type": "message_update", "assistantMessageEvent": {"type": "text_end"}})
    for event in sent:
        writer.send(event)
    pipe.open.set()
    assert writer.close(30)
    lines = pipe.lines()
    assert len(lines) < 50 and all(line["type"] == "message_update" for line in lines)
    inner = [line["assistantMessageEvent"] for line in lines]
    written = "".join(i["delta"] for i in inner if i["type"] == "text_delta")
    assert written == "".join(f"t{n}," * 20 for n in range(300))
    assert [i["type"] for i in inner][-2:] == ["thinking_delta", "text_end"]
