"""find never freezes the app: a glob whose regex backtracks for ages leaves the event
loop free, an abort ends the call at once, and the walk gives up after its budget."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.find import FindTool
from tests.tool_fixtures import make_ctx, write_tree
from tests.tool_loop_probe import PROBE_TIMEOUT_S, run_probe

# pathspec turns each `*` into `[^/]*`: against a long name of `a` with no `b`, Python's
# regex tries every way to split the name between the stars.
RUNAWAY_GLOB = "*a" * 12 + "*b"


@pytest.fixture
def runaway_tree(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"a" * 60: "", "ok.txt": ""})
    return tmp_path


def test_a_runaway_glob_never_starves_the_event_loop(runaway_tree: Path) -> None:
    spec = {
        "tool": "find",
        "args": {"pattern": RUNAWAY_GLOB},
        "workspace": str(runaway_tree),
        "abort_after": 0.5,
    }
    report = run_probe(spec)
    if report is None:
        pytest.fail(f"the event loop froze: the probe did not report within {PROBE_TIMEOUT_S} s")
    assert report["max_gap"] < 0.25, report
    # The loop kept beating: how many beats fit in the call depends on how busy the
    # machine is (19 under CI's parallel suites); max_gap above is what bounds a stall.
    assert report["beats"] >= 5, report
    assert report["abort_to_end"] < 1.0, report
    assert report["outcome"] == "aborted", report


async def test_find_gives_up_after_its_budget(runaway_tree: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError, match="took too long"):
        await FindTool(budget_s=1.0).execute({"pattern": RUNAWAY_GLOB}, make_ctx(runaway_tree))
    assert time.monotonic() - started < 3.0


async def test_find_still_finds(runaway_tree: Path) -> None:
    result = await FindTool().execute({"pattern": "*.txt"}, make_ctx(runaway_tree))
    assert result.content == "ok.txt"
