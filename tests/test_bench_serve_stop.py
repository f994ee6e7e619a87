"""The benchmarks' `ink serve` (benchmarks/fig7_serve.py `InkServe`, figures 7 and 11)
stops on its SIGINT even when the benchmark runs with SIGINT ignored, as a shell's
background job does: the server used to inherit the ignored signal, leave it ignored
(serve/stopping.py, for nohup) and be killed 30 s later. Through the real processes."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

from benchmarks.common import REPO_ROOT

CHILD = textwrap.dedent(
    """
    import asyncio, signal, sys, tempfile, time
    from pathlib import Path
    from benchmarks.fig7_serve import InkServe

    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN

    async def main():
        with tempfile.TemporaryDirectory() as tmp:
            server = InkServe("http://127.0.0.1:9/v1", Path(tmp), None)
            await server.started()
            started = time.monotonic()
            server.close()
            print(server.proc.returncode, round(time.monotonic() - started, 2))

    asyncio.run(main())
    """
)


def test_the_benchmark_server_stops_on_sigint_from_a_background_benchmark() -> None:
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=90,
        # As `cmd &` in a script: SIGINT ignored, inherited by every child.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    code, took = proc.stdout.split()
    # 130: it stopped by its SIGINT, not killed (-9) after close()'s 30 s.
    assert code == "130"
    assert float(took) < 20
    assert time.monotonic() - began < 60
