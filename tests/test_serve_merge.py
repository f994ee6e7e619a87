"""Deltas waiting for a slow SSE client merge only within one stream of text: one run,
one agent (sub-agents share their parent's run) and one kind. Merged across agents, a
sub-agent's text was shown as another's (seen as a flaky page test under load)."""

from __future__ import annotations

from typing import Any

from ink_tui.serve.events_stream import Frame, merge_deltas


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
