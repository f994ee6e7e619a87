"""The storm's heartbeat sees a loop held by our code, whether it blocks or computes."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest

from tests.loop_heartbeat import Heartbeat


def _spin(seconds: float) -> None:
    # Computing for that long: CPU time, which a busy machine stretches but never cuts.
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@pytest.mark.parametrize("hold", [time.sleep, _spin], ids=["blocking call", "computing"])
async def test_a_held_loop_counts_in_full(hold: object) -> None:
    heartbeat = Heartbeat()
    heartbeat.start()
    await asyncio.sleep(0.05)
    hold(0.3)  # type: ignore[operator]
    await asyncio.sleep(0.05)
    await heartbeat.stop()
    assert heartbeat.worst > 0.2


async def test_a_free_loop_is_not_late() -> None:
    heartbeat = Heartbeat()
    heartbeat.start()
    # Counted in beats, not in time: a busy machine may give the loop fewer in 0.3 s.
    await heartbeat.beats(11)
    await heartbeat.stop()
    assert heartbeat.worst < 0.1


async def test_the_whole_process_kept_off_the_cpu_is_not_the_loops_fault() -> None:
    heartbeat = Heartbeat()
    heartbeat.start()
    await asyncio.sleep(0.05)
    # Another process stops this one for 0.3 s, as a busy machine's scheduler might.
    stopper = await asyncio.create_subprocess_exec(
        sys.executable, "-c",
        "import os, signal, sys, time; pid = int(sys.argv[1]); time.sleep(0.05); "
        "os.kill(pid, signal.SIGSTOP); time.sleep(0.3); os.kill(pid, signal.SIGCONT)",
        str(os.getpid()),
    )  # fmt: skip
    await asyncio.sleep(0.6)
    assert await stopper.wait() == 0
    await heartbeat.stop()
    assert heartbeat.worst_raw > 0.25
    assert heartbeat.worst < 0.1
