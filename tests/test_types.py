"""ink_tui/ type-checks clean: mypy with the project's configuration ([tool.mypy] in
pyproject.toml: strict on core/ and control/, untyped bodies checked everywhere).

Run as `python -m mypy` from the repository root, so it reads the same configuration and
keeps its cache in .mypy_cache (ignored by git) as a run by hand does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(600)
def test_mypy_finds_no_errors() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"mypy is not clean:\n{done.stdout}{done.stderr}"
