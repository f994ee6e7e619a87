"""Deltas waiting for a slow SSE client merge only within one stream of text: one run,
one agent (sub-agents share their parent's run) and one kind. Merged across agents, a
sub-agent's text was shown as another's (seen as a flaky page test under load).

And the write window: while text streams, a client is written to at most once per
`MERGE_WINDOW_S`, the deltas of the window in one write; a delta that comes after the
window, or any other event, goes out at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ink_tui.serve import events_stream
from ink_tui.serve.events_stream import EventLog, Frame, merge_deltas, sse_stream


def delta(seq: int, text: str, agent: str | None = None, kind: str = "text") -> Frame:
    event: dict[str, Any] = {
        "type": "message_update",
        "seq": seq,
        "run_id": "r1",
        "delta": {"type": kind, "text": text},
    }
    if agent is not None:
        event["agent_id"] = agent
    return Frame(seq, "message_update", event)


def texts(frames: list[Frame]) -> list[tuple[str | None, str]]:
    return [(f.event.get("agent_id"), f.event["delta"]["text"]) for f in frames]


def test_one_agents_deltas_merge() -> None:
    merged = merge_deltas([delta(1, "a"), delta(2, "b"), delta(3, "c")], lambda s: s)
    assert texts(merged) == [(None, "abc")]
    assert merged[0].event["seq_first"] == 1 and merged[0].seq == 3


def test_deltas_of_different_agents_in_one_run_stay_apart() -> None:
    frames = [
        delta(1, "alpha ", "a1"),
        delta(2, "beta ", "a2"),
        delta(3, "more alpha", "a1"),
        delta(4, "main", None),
        delta(5, " too", None),
    ]
    merged = merge_deltas(frames, lambda s: s)
    assert texts(merged) == [
        ("a1", "alpha "),
        ("a2", "beta "),
        ("a1", "more alpha"),
        (None, "main too"),
    ]


def test_kinds_stay_apart() -> None:
    merged = merge_deltas([delta(1, "t", kind="thinking"), delta(2, "x")], lambda s: s)
    assert texts(merged) == [(None, "t"), (None, "x")]


def _event(seq: int, kind: str = "message_update", text: str = "x") -> dict[str, Any]:
    if kind == "message_update":
        return delta(seq, text).event
    return {"type": kind, "seq": seq, "run_id": "r1"}


def _messages(chunk: bytes) -> list[tuple[str, str]]:
    """(id, event type) of each SSE message in a written chunk."""
    out = []
    for message in chunk.decode().split("\n\n"):
        if message:
            fields = dict(line.split(": ", 1) for line in message.split("\n"))
            out.append((fields["id"], fields["event"]))
    return out


async def test_deltas_within_the_window_gather_into_one_write() -> None:
    log = EventLog("s1")
    body = sse_stream(log, log.listen(None), mask=lambda s: s)
    loop = asyncio.get_running_loop()
    log.append(_event(1))
    # Before the first write: its window opens no sooner, however late this task runs on.
    before = loop.time()
    assert _messages(await anext(body)) == [("1", "message_update")]
    for seq in (2, 3, 4):
        log.append(_event(seq, text=str(seq)))
    chunk = await anext(body)
    assert loop.time() - before >= events_stream.MERGE_WINDOW_S * 0.99
    assert _messages(chunk) == [("4", "message_update")]
    assert '"seq_first":2' in chunk.decode() and '"text":"234"' in chunk.decode()
    await body.aclose()


async def test_a_delta_after_the_window_and_other_events_go_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = EventLog("s1")
    body = sse_stream(log, log.listen(None), mask=lambda s: s)
    log.append(_event(1))
    await anext(body)
    # Past the window (a sleep is never shorter than asked): no wait for the next.
    await asyncio.sleep(events_stream.MERGE_WINDOW_S * 2)

    async def no_wait(delay: float) -> None:
        raise AssertionError(f"waited {delay} s")

    monkeypatch.setattr(events_stream.asyncio, "sleep", no_wait)
    log.append(_event(2))
    assert _messages(await anext(body)) == [("2", "message_update")]
    # Within the window, but not text: at once too.
    log.append(_event(3, "tool_execution_start"))
    assert _messages(await anext(body)) == [("3", "tool_execution_start")]
    await body.aclose()
