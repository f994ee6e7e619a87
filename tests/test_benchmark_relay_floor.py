"""`benchmarks.relay_floor` (the least a delta costs a server that only passes it on)
relays every model write of a short run and measures it. No timing is checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmark_runs import run_benchmark


@pytest.mark.timeout(120)
def test_a_short_run_relays_every_write_and_measures_it(tmp_path: Path) -> None:
    out = tmp_path / "relay.json"
    proc = run_benchmark(
        "benchmarks.relay_floor", "--streams", "5", "--seconds", "1", "--out", str(out), timeout=110
    )
    assert "per model write" in proc.stdout
    result = json.loads(out.read_text())
    # Every write of the window was read (the reads go on past both of its ends).
    assert result["reads"] >= 0.9 * result["model_writes"] > 0
    assert result["us_per_delta"] > 0
