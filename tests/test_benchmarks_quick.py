"""The benchmark command in its quick mode (tiny sizes, one run each), so it never rots.

Only that every figure ran and is a number is checked here: timing targets belong to the
full run on a quiet machine, never to a test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.report import FIGURES
from benchmarks.runner import OPTIONAL

REPO_ROOT = Path(__file__).resolve().parent.parent


# About a minute on a quiet machine; the limits only stop a hang, and a busy machine
# (the suite's other processes, a CPU hog) made it four times as long.
@pytest.mark.timeout(610)
def test_quick_benchmark_prints_and_writes_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "quick.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(out)],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(out.read_text())

    assert report["meta"]["mode"] == "quick"
    # Optional figures run only when named (their own tests: test_benchmark_scaling.py).
    assert set(report["figures"]) == set(FIGURES) - OPTIONAL
    for name, figure in report["figures"].items():
        assert figure["error"] is None, f"{name}: {figure['error']}"

    expected = [
        (row.figure, row.key)
        for name, (_, rows) in FIGURES.items()
        if name not in OPTIONAL
        for row in rows
    ]
    assert [(row["figure"], row["key"]) for row in report["rows"]] == expected
    for row in report["rows"]:
        value = row["value"]
        assert isinstance(value, (int, float)) and not isinstance(value, bool), row
        assert math.isfinite(value), row
        if row["baseline"] is not None:
            assert math.isfinite(row["baseline"]), row
        # The printed table has a line for every figure.
        assert row["metric"] in proc.stdout
