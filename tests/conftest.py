from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedServer


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
