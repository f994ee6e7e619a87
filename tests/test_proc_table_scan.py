"""Scans of the process table asked for at once share one, and none is stale: a caller
gets a scan that started after it asked, so it sees what its signals did."""

from __future__ import annotations

import os
import threading

import pytest

from ink_tui.tools import proc_table
from ink_tui.tools.proc_table import Proc, Table, _SharedScan


def _table(generation: int) -> Table:
    return {generation: Proc(generation, 1, generation, generation, "S", generation)}


class _Scans:
    """A scan function whose first scan waits to be let go."""

    def __init__(self) -> None:
        self.count = 0
        self.inside = threading.Event()
        self.release = threading.Event()

    def __call__(self) -> Table:
        self.count += 1
        generation = self.count
        if generation == 1:
            self.inside.set()
            assert self.release.wait(30)
        return _table(generation)


def _waiting(scanner: _SharedScan, count: int) -> None:
    with scanner._changed:
        assert scanner._changed.wait_for(lambda: scanner.waiting >= count, 30)


def test_callers_during_a_scan_share_the_next_one_and_none_gets_the_old(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scans = _Scans()
    monkeypatch.setattr(proc_table, "_scan_now", scans)
    scanner = _SharedScan()
    got: dict[str, Table] = {}

    def call(name: str) -> None:
        got[name] = scanner.scan()

    first = threading.Thread(target=call, args=("first",))
    first.start()
    assert scans.inside.wait(30)
    later = [threading.Thread(target=call, args=(f"later{n}",)) for n in range(3)]
    for thread in later:
        thread.start()
    _waiting(scanner, 3)
    scans.release.set()
    for thread in [first, *later]:
        thread.join(30)
    assert got["first"] == _table(1)
    # The three asked while the first scan ran: that one may predate their signals.
    assert [got[f"later{n}"] for n in range(3)] == [_table(2)] * 3
    assert scans.count == 2
    # Each caller has its own copy to change.
    got["later0"].clear()
    assert got["later1"] == _table(2)


def test_a_scan_sees_this_process() -> None:
    table = proc_table.scan()
    if table is None:
        pytest.skip("no /proc here")
    me = table[os.getpid()]
    assert me.alive and me.ppid == os.getppid()
