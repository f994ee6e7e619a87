"""`benchmarks.frame_costs` (where a streamed frame's CPU goes) still finds what it times.

It wraps functions by name in ink and Textual: a rename would leave a phase untimed and
the map quietly wrong, so a short run must find every one and time real frames. No
timing is checked (that belongs to a full run on a quiet machine).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.frame_costs import PHASES
from tests.benchmark_runs import run_benchmark


@pytest.mark.timeout(200)
def test_a_short_run_times_every_phase_of_real_frames(tmp_path: Path) -> None:
    out = tmp_path / "frames.json"
    proc = run_benchmark(
        "benchmarks.frame_costs",
        *("--warmup-seconds", "0.5", "--window-seconds", "1", "--out", str(out)),
        timeout=190,
    )
    result = json.loads(out.read_text())
    assert result["missing"] == []
    assert result["frames"] > 0
    calls = {row["phase"]: row["calls"] for row in result["phases"]}
    # The frame, the open tail drawn in it and the screen update it asked for all ran.
    for label in ("transcript frame", "draw the open tail", "screen update"):
        assert calls[label] > 0, label
    for phase in PHASES:
        assert phase.label in proc.stdout
