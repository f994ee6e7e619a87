"""What differs between two checkpoints, read from one `git diff-tree --raw --numstat -z`.

The raw part gives each path's status, modes and blob ids (what a restore writes); the
numstat part its line counts ("-" for a binary file). Renames are off: a rename is a
deletion and an addition, which is also what a restore does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

Status = Literal["added", "modified", "deleted"]

DIFF_ARGS: tuple[str, ...] = (
    "diff-tree",
    "-r",
    "-z",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--raw",
    "--numstat",
)

_STATUS: dict[str, Status] = {"A": "added", "D": "deleted", "M": "modified", "T": "modified"}
MODE_FILE = "100644"
MODE_EXECUTABLE = "100755"
MODE_SYMLINK = "120000"
MODE_GITLINK = "160000"


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str  # relative to the workspace, "/"-separated
    status: Literal["added", "modified", "deleted"]  # going from `from_commit` to `to_commit`
    added: int | None  # lines added (None for a binary file)
    removed: int | None  # lines removed (None for a binary file)


@dataclass(frozen=True, slots=True)
class TreeChange:
    """One path's change with what it takes to write the new side."""

    change: FileChange
    new_mode: str  # "000000" when deleted
    new_sha: str


def parse_diff(output: bytes) -> list[TreeChange]:
    """Parse `git diff-tree` with DIFF_ARGS; submodule links (never captured) are dropped."""
    tokens = output.split(b"\0")
    raw: list[tuple[str, str, str, str]] = []  # path, status, new mode, new sha
    links: set[str] = set()
    index = 0
    while index + 1 < len(tokens) and tokens[index].startswith(b":"):
        fields = tokens[index][1:].decode("ascii").split()
        old_mode, new_mode, _old_sha, new_sha, status = fields[:5]
        path = os.fsdecode(tokens[index + 1])
        if MODE_GITLINK in (old_mode, new_mode):
            links.add(path)
        raw.append((path, status[:1], new_mode, new_sha))
        index += 2
    counts: dict[str, tuple[int | None, int | None]] = {}
    for token in tokens[index:]:
        if not token:
            continue
        added, removed, name = token.split(b"\t", 2)
        counts[os.fsdecode(name)] = (_count(added), _count(removed))
    changes: list[TreeChange] = []
    for path, status, new_mode, new_sha in raw:
        if path in links or status not in _STATUS:
            continue
        added_lines, removed_lines = counts.get(path, (None, None))
        change = FileChange(path, _STATUS[status], added_lines, removed_lines)
        changes.append(TreeChange(change, new_mode, new_sha))
    return changes


def _count(field: bytes) -> int | None:
    return None if field == b"-" else int(field)
