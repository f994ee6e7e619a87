from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.scripted_server import ScriptedServer

# ANTHROPIC_API_KEY alone picks Anthropic's API: a developer's own key must never turn a
# test that expects the offline demo (or a subprocess it starts) into a real request.
os.environ.pop("ANTHROPIC_API_KEY", None)
# pytest-xdist's workers export COLUMNS=80 and LINES=24, and Textual takes those over the
# terminal's own size: an `ink` in a 140x45 tmux pane or pty would draw 80x24.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)
# Started in the background by a shell without job control, pytest inherits SIGINT
# ignored, and so would every ink the tests start (ink keeps a signal it was started with
# ignored, as under nohup): the tests of Ctrl+C need it as a terminal delivers it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Property tests drive a real event loop and real subprocesses: no per-example deadline.
# "ink" (the default) keeps the suite fast; `pytest --hypothesis-profile=long` (or
# HYPOTHESIS_PROFILE=long) runs thousands of examples.
settings.register_profile(
    "ink", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ink"))


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("# Sample\n\nA tiny project for tests.\n")
    (root / "sum.py").write_text("def total(xs):\n    return sum(xs)\n")
    return root
