"""docs/reliability.md names a test for every promise: each named test must exist, so a
renamed or deleted test cannot leave a promise unguarded without this failing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reliability.md"


def named_tests() -> list[tuple[str, str]]:
    """(file, test) pairs; `::name` after a file in the same cell refers to that file."""
    pairs: list[tuple[str, str]] = []
    for line in DOC.read_text().splitlines():
        if not line.startswith("|"):
            continue
        current = None
        for match in re.finditer(r"`(test_[\w]+\.py)?(?:::(\w+))?", line):
            file, test = match.group(1), match.group(2)
            if file:
                current = file
            if test and current:
                pairs.append((current, test))
    return pairs


def test_every_promise_names_a_test_that_exists() -> None:
    pairs = named_tests()
    assert len(pairs) > 30
    missing = [
        f"{file}::{test}"
        for file, test in pairs
        if not (ROOT / "tests" / file).exists()
        or not re.search(rf"def {test}\b", (ROOT / "tests" / file).read_text())
    ]
    assert missing == []


def test_every_row_has_a_test() -> None:
    rows = [
        line
        for line in DOC.read_text().splitlines()
        if line.startswith("| ") and not line.startswith(("| promise", "| ---"))
    ]
    assert rows and all("test_" in row or ".ci/run" in row for row in rows)
