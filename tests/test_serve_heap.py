"""`ink serve` listens with a run's modules loaded and its start-up heap frozen, so a full
garbage collection while many sessions stream walks only what the sessions hold (a pass
over the whole heap held every stream back 50-180 ms: figure 7 of the benchmarks).

The real `ink serve` command runs in a subprocess; the only thing replaced is uvicorn's
`Server.serve`, which reports what the process looks like at the moment it would start
listening, then returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ink_tui.serve.heap import RUN_MODULES

_PROBE = """
import gc, json, sys
import uvicorn

async def report(self, sockets=None):
    print("PROBE " + json.dumps({
        "frozen": gc.get_freeze_count(),
        "loaded": [name for name in sys.argv[1:] if name in sys.modules],
    }), flush=True)

uvicorn.Server.serve = report
from ink_tui.cli import main
main(["serve", "--port", "0"])
"""


def test_the_server_listens_with_a_runs_modules_loaded_and_the_heap_frozen(
    workspace: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(
        HOME=str(tmp_path),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *RUN_MODULES],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("PROBE "))
    probe = json.loads(line.removeprefix("PROBE "))
    assert "httpx" in RUN_MODULES and "ink_tui.core.loop" in RUN_MODULES
    assert probe["loaded"] == list(RUN_MODULES)
    # Most of a served process's objects are its modules': tens of thousands.
    assert probe["frozen"] > 20_000
