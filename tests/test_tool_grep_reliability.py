"""grep never freezes the app: a runaway regex leaves the event loop free, an abort ends
the call at once, and the Python fallback gives up after its time budget."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ink_tui.core.abort import AbortError
from ink_tui.core.tool_api import ToolError
from ink_tui.tools.grep import GrepTool
from ink_tui.tools.grep_ripgrep import find_ripgrep
from tests.tool_fixtures import make_ctx, make_ctx_with_abort, write_tree
from tests.tool_loop_probe import PROBE_TIMEOUT_S, run_probe

# Exponential backtracking in Python's `re`: each line is 2**40 steps of work.
RUNAWAY = "(a+)+$"
RUNAWAY_TEXT = ("a" * 40 + "!\n") * 3


@pytest.fixture
def runaway_tree(tmp_path: Path) -> Path:
    write_tree(tmp_path, {"a.txt": RUNAWAY_TEXT, "ok.txt": "fine\n"})
    return tmp_path


def probe_grep(workspace: Path, use_ripgrep: bool, abort_after: float) -> dict[str, Any]:
    spec = {
        "tool": "grep",
        "args": {"pattern": RUNAWAY},
        "workspace": str(workspace),
        "abort_after": abort_after,
        "use_ripgrep": use_ripgrep,
    }
    report = run_probe(spec)
    if report is None:
        pytest.fail(f"the event loop froze: the probe did not report within {PROBE_TIMEOUT_S} s")
    return report


@pytest.mark.parametrize("use_ripgrep", [False, True], ids=["python", "ripgrep"])
def test_a_runaway_regex_never_starves_the_event_loop(
    runaway_tree: Path, use_ripgrep: bool
) -> None:
    if use_ripgrep and find_ripgrep() is None:
        pytest.skip("ripgrep (rg) cannot be found")
    report = probe_grep(runaway_tree, use_ripgrep, abort_after=0.5)
    # Heartbeats every 10 ms: a gap of a quarter second means the loop was held.
    assert report["max_gap"] < 0.25, report
    # The loop kept beating: how many beats fit in the call depends on how busy the
    # machine is and, with rg, on how soon rg is done (18 under CI's parallel suites);
    # max_gap above is what bounds a stall.
    assert report["beats"] >= 2, report
    assert report["abort_to_end"] < 1.0, report
    if use_ripgrep:
        # rg's engine does not backtrack: it is done long before the abort.
        assert report["outcome"] == "result", report
        assert "no matches" in report["text"]
    else:
        assert report["outcome"] == "aborted", report


async def test_ripgrep_is_used_without_the_venv_on_path(
    runaway_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The `ripgrep` wheel puts rg next to the interpreter; ink started by its full path
    # (or from a launcher) may not have that folder on PATH.
    next_to_python = Path(sys.executable).parent / "rg"
    if not next_to_python.is_file():
        pytest.skip("this interpreter has no rg installed beside it")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert find_ripgrep() == str(next_to_python)
    result = await GrepTool().execute({"pattern": "fine"}, make_ctx(runaway_tree))
    assert result.details["backend"] == "ripgrep"
    assert result.content == "ok.txt:1: fine"


async def test_python_fallback_gives_up_after_its_budget(runaway_tree: Path) -> None:
    tool = GrepTool(use_ripgrep=False, python_budget_s=1.0)
    started = time.monotonic()
    with pytest.raises(ToolError) as caught:
        await tool.execute({"pattern": RUNAWAY}, make_ctx(runaway_tree))
    assert time.monotonic() - started < 3.0
    message = str(caught.value)
    assert "took too long" in message
    assert "Simplify the pattern" in message
    assert _workers() == []


async def test_abort_kills_the_python_fallback(runaway_tree: Path) -> None:
    ctx, abort = make_ctx_with_abort(runaway_tree)
    call = asyncio.create_task(GrepTool(use_ripgrep=False).execute({"pattern": RUNAWAY}, ctx))
    # Until the fallback runs in a child process (it backtracks for far longer than this).
    deadline = time.monotonic() + 20
    while not _workers() and not call.done() and time.monotonic() < deadline:
        await asyncio.wait({call}, timeout=0.02)
    assert _workers(), "the fallback should be running in a child process"
    abort.abort("test")
    with pytest.raises(AbortError):
        await asyncio.wait_for(call, 1.0)
    assert _workers() == []


async def test_python_fallback_reports_a_bad_regex(runaway_tree: Path) -> None:
    with pytest.raises(ToolError, match="invalid regex"):
        await GrepTool(use_ripgrep=False).execute({"pattern": "(unclosed"}, make_ctx(runaway_tree))


def _workers() -> list[int]:
    """Live grep workers that are children of this process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat = file.read()
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                cmdline = file.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[1]) == os.getpid() and fields[0] != b"Z" and b"grep_worker" in cmdline:
            found.append(int(entry))
    return found
