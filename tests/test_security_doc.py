"""docs/security.md names a test for every promise: each named test must exist, so a
renamed or deleted test cannot leave a promise unguarded without this failing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "security.md"
SECTIONS = ("## Who may be hostile", "## Promises", "## Limits")


def cells(line: str) -> list[str]:
    """A table row's cells; a `|` inside backticks is text, not a border."""
    parts, current, quoted = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            quoted = not quoted
        if char == "|" and not quoted:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


def promise_rows() -> list[list[str]]:
    return [
        cells(line)
        for line in DOC.read_text().splitlines()
        if line.startswith("| ") and not line.startswith(("| promise", "| ---"))
    ]


def named_tests(cell: str) -> list[tuple[str, str]]:
    """(file, test) pairs; `::name` after a file in the same cell refers to that file."""
    pairs: list[tuple[str, str]] = []
    current = None
    for match in re.finditer(r"`(?:tests/)?(test_\w+\.py)?(?:::(\w+))?", cell):
        file, test = match.group(1), match.group(2)
        if file:
            current = file
        if test and current:
            pairs.append((current, test))
    return pairs


def test_every_promise_names_a_test_that_exists() -> None:
    pairs = [pair for row in promise_rows() for pair in named_tests(row[-1])]
    assert len(pairs) > 60
    missing = []
    for file, test in pairs:
        path = ROOT / "tests" / file
        # A module-level test, sync or async; parametrized ones keep their function's name.
        defined = re.compile(rf"^(async )?def {test}\(", re.MULTILINE)
        if not path.exists() or not defined.search(path.read_text()):
            missing.append(f"{file}::{test}")
    assert missing == []


def test_every_row_says_what_it_holds_against_and_names_a_test() -> None:
    rows = promise_rows()
    assert len(rows) > 25
    bad = [
        row[0][:60]
        for row in rows
        if len(row) != 3 or not row[0] or not row[1] or not named_tests(row[2])
    ]
    assert bad == []


def test_the_page_says_who_may_be_hostile_and_what_is_not_promised() -> None:
    text = DOC.read_text()
    assert all(f"\n{section}" in text for section in SECTIONS)
    limits = text.split("\n## Limits", 1)[1]
    assert limits.count("\n- **") >= 5
