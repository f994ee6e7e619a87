"""The benchmark report's spread, its `?` marks, `--check`, and runs side by side.

A fake figure (a module with `measure` and `summarize`) stands in for the real ones, so
the runner's verdicts are checked on numbers chosen here, in milliseconds of test time.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report, runner
from benchmarks.compare import all_held, held, side_by_side
from benchmarks.report import Row, table, untrusted_notes
from benchmarks.spread import per_run_summaries, row_spread


def _summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    values = sorted(samples["ink"])
    return {"ms": values[len(values) // 2]}


def test_each_run_is_summarized_alone_and_spread_over_runs() -> None:
    per_run = per_run_summaries(_summarize, {"ink": [30.0, 10.0, 20.0]}, 3)
    assert [summary["ms"] for summary in per_run] == [30.0, 10.0, 20.0]
    spread = row_spread("ms", per_run, lambda v: v <= 25)
    assert spread is not None
    assert (spread["min"], spread["median"], spread["max"]) == (10.0, 20.0, 30.0)
    assert spread["mixed"] is True  # 30 misses a target of 25, the others pass
    assert spread["wide"] is True  # 30 / 10 is past WIDE_RATIO


def test_samples_without_one_entry_per_run_give_no_spread() -> None:
    assert per_run_summaries(_summarize, {"ink": [1.0, 2.0]}, 3) == []


def test_steady_runs_are_trusted_and_unsteady_ones_are_marked() -> None:
    row = Row("9", "a figure", "ms", "ms", None, ("<=", 25))
    steady = row.evaluate({"ms": 20.0}, [{"ms": 19.0}, {"ms": 20.0}, {"ms": 21.0}])
    mixed = row.evaluate({"ms": 20.0}, [{"ms": 12.0}, {"ms": 20.0}, {"ms": 40.0}])
    assert steady["pass"] is True and steady["untrusted"] is None
    assert mixed["pass"] is True and mixed["untrusted"] == "runs on both sides of the target"
    text = table([steady, mixed])
    assert "19.0 - 21.0" in text and "12.0 - 40.0" in text
    assert "| pass ? |" in text.replace("  ", " ").replace("  ", " ")
    (note,) = untrusted_notes([steady, mixed])
    assert "12.0, 20.0, 40.0" in note


def _report(value: float, passed: bool | None) -> dict[str, Any]:
    row = {"figure": "9", "metric": "a figure", "key": "ms", "value": value, "unit": "ms"}
    row.update(target="<= 25", **{"pass": passed})
    return {"meta": {"commit": "abc1234"}, "rows": [row]}


def test_side_by_side_holds_only_when_every_run_passed() -> None:
    runs = [_report(20.0, True), _report(30.0, False), _report(21.0, True)]
    assert held([r["rows"][0] for r in runs]) == "NO"
    assert not all_held(runs)
    text = side_by_side(runs)
    assert "20.0 ms" in text and "30.0 ms" in text and "| NO" in text
    assert all_held([_report(20.0, True), _report(21.0, True)])


@pytest.fixture
def fake_figure(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[float]]:
    """A figure whose three runs take the times in the returned dict's `ink` list."""
    samples: dict[str, list[float]] = {"ink": []}
    module = types.ModuleType("fake_figure")
    module.measure = lambda quick, runs: {"ink": list(samples["ink"][:runs])}  # type: ignore[attr-defined]
    module.summarize = _summarize  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_figure", module)
    monkeypatch.setattr(runner, "MODULES", {"fake": ("fake_figure", 3)})
    rows = [Row("9", "fake time", "ms", "ms", None, ("<=", 25))]
    monkeypatch.setattr(report, "FIGURES", {"fake": ("9 Fake", rows)})
    monkeypatch.setattr(runner, "FIGURES", report.FIGURES)
    monkeypatch.setattr(runner, "pin_cores", lambda cores: [0])
    return samples


def test_check_fails_on_a_median_miss_not_on_one_slow_run(
    fake_figure: dict[str, list[float]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    fake_figure["ink"] = [10.0, 20.0, 90.0]  # one slow run; the median passes
    assert runner.main(["--check", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["rows"][0]["spread"]["max"] == 90.0
    assert "?" in capsys.readouterr().out

    fake_figure["ink"] = [10.0, 30.0, 40.0]  # the median misses
    assert runner.main(["--check", "--out", str(out)]) == 2
    assert runner.main(["--out", str(out)]) == 0  # without --check, a miss is reported only


def test_repeat_writes_each_pass_and_the_side_by_side(
    fake_figure: dict[str, list[float]], tmp_path: Path
) -> None:
    fake_figure["ink"] = [10.0, 20.0, 21.0]
    out = tmp_path / "r.json"
    assert runner.main(["--repeat", "3", "--check", "--out", str(out)]) == 0
    for i in (1, 2, 3):
        assert json.loads((tmp_path / f"r-run{i}.json").read_text())["rows"][0]["value"] == 20.0
    side = (tmp_path / "r-runs.md").read_text()
    assert side.count("20.0 ms") == 3 and "| yes" in side


def test_figure_numbers_name_only_figures_of_a_full_pass() -> None:
    full = runner.selected("")
    assert "scaling" not in full
    assert runner.selected(str(len(full))) == [full[-1]]
    assert runner.selected("scaling") == ["scaling"]
    with pytest.raises(SystemExit, match="unknown figure"):
        runner.selected(str(len(full) + 1))
