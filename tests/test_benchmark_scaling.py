"""The optional scaling figure (`python -m benchmarks --only scaling`) in its quick mode.

Two real `ink serve` processes on one session store behind the benchmark's proxy: it must
run, every row be a number, and its checks hold (the lock refuses a second backend, a
reconnect after a hand-over starts with `replay_gap`, so does one after a backend was
SIGKILLed, nothing misrouted, every session file whole, the last backend stopped by its
Ctrl+C). No timing is checked here.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.report import FIGURES

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(310)
def test_quick_scaling_figure_runs_and_its_checks_hold(tmp_path: Path) -> None:
    out = tmp_path / "scaling.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "scaling", "--out", str(out)],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(out.read_text())
    assert set(report["figures"]) == {"scaling"}
    assert report["figures"]["scaling"]["error"] is None
    assert [row["key"] for row in report["rows"]] == [r.key for r in FIGURES["scaling"][1]]
    for row in report["rows"]:
        assert isinstance(row["value"], (int, float)) and math.isfinite(row["value"]), row
        if row["target"] is not None:
            assert row["pass"], row
    (sample,) = report["figures"]["scaling"]["samples"]["ink"]
    assert sample["locked_status"] == 409 and sample["locked_error"] == "locked"
    # The first backend was SIGKILLed on purpose (its session then opened on the second).
    assert sample["exit_codes"] == [-9, 130]
    assert sample["kill_resume_status"] == 201 and sample["kill_first_event"] == "replay_gap"
    assert sample["files_ok"] == sample["files"] == sample["sessions"] + sample["direct"]


def test_the_proxy_finds_the_end_of_a_chunked_body_however_it_is_split() -> None:
    from benchmarks.affinity_proxy import ChunkScanner

    chunks = [b"id: 1\nevent: x\ndata: {}\n\n", b"0\r\n\r\n" * 3, b"\r\n", b": ping\n\n" * 40]
    body = b"".join(f"{len(c):x}\r\n".encode() + c + b"\r\n" for c in chunks)
    body += b"0\r\n\r\n"
    for size in (1, 2, 3, 7, 64, len(body)):
        scanner = ChunkScanner()
        for start in range(0, len(body), size):
            assert not scanner.done
            scanner.feed(body[start : start + size])
        assert scanner.done, size
    # Not done one byte short of the end.
    scanner = ChunkScanner()
    scanner.feed(body[:-1])
    assert not scanner.done


@pytest.mark.timeout(130)
@pytest.mark.parametrize("front", ["nginx", "haproxy"])
def test_quick_scaling_figure_behind_a_standard_proxy(front: str, tmp_path: Path) -> None:
    """Only where the machine has that proxy (the project does not install it)."""
    import shutil

    if shutil.which(front) is None and not Path(f"/usr/sbin/{front}").exists():
        pytest.skip(f"no {front} on this machine")
    out = tmp_path / "scaling.json"
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "benchmarks.fig11_scaling", "--quick"),
            *("--front", front, "--out", str(out)),
        ],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    sample = json.loads(out.read_text())
    assert sample["front"] == front
    assert sample["misrouted"] == 0
    assert sample["locked_status"] == 409 and sample["kill_first_event"] == "replay_gap"
    assert sample["files_ok"] == sample["files"] == sample["sessions"] + sample["direct"]


async def test_a_session_on_the_killed_backend_is_found_or_opened_for_the_check() -> None:
    """HAProxy places new sessions at random: when none of the measured ones went to
    the first backend, sessions are opened until one does, and they are named so the
    files' check leaves them out."""
    from benchmarks.fig11_scaling import _pinned_to_first

    class Reader:
        def __init__(self, session_id: str) -> None:
            self.session_id = session_id
            self.closed = False

        async def aclose(self) -> None:
            self.closed = True

    class Front:
        def __init__(self, pins: dict[str, int], places: list[int]) -> None:
            self.pins = pins
            self.places = iter(places)
            self.opened: list[Reader] = []

        async def open(self, count: int, direct: object) -> list[Reader]:
            reader = Reader(f"new{len(self.opened)}")
            self.pins[reader.session_id] = next(self.places)
            self.opened.append(reader)
            return [reader]

    measured = Front({"a": 1, "b": 0}, [])
    assert await _pinned_to_first(measured, []) == ("b", [])  # type: ignore[arg-type]
    elsewhere = Front({"a": 1, "b": 1}, [1, 1, 0])
    found = await _pinned_to_first(elsewhere, [])  # type: ignore[arg-type]
    assert found == ("new2", ["new0", "new1", "new2"])
    assert all(reader.closed for reader in elsewhere.opened)
