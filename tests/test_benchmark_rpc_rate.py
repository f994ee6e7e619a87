"""Figure 6's event rate when the reader got the whole window in one read of the pipe."""

from __future__ import annotations

from typing import Any

from benchmarks.fig6_rpc import Line, _rate


def _line(at: float, message: dict[str, Any]) -> Line:
    return Line(at, b"", message)


UPDATE = {"type": "message_update", "delta": {"text": "abcd"}}
SETTLED = {"type": "agent_settled"}


def test_the_window_is_timed_by_the_reader_stamps() -> None:
    lines = [_line(1.0, {"type": "agent_start"}), _line(2.0, UPDATE), _line(4.0, SETTLED)]
    assert _rate(lines, written=0.5) == (2 / 2.0, 2, 4)


def test_a_window_read_at_once_is_timed_from_the_prompt_not_divided_by_zero() -> None:
    # A short answer on a busy host: the update and the settling in one read.
    lines = [_line(3.0, UPDATE), _line(3.0, {"type": "response"}), _line(3.0, SETTLED)]
    assert _rate(lines, written=1.0) == (2 / 2.0, 2, 4)
