"""What the demo model learns from tool results: parsing `ls`, `read`, `grep`, `bash`, `find`
(and the answer of its sub-agent, a `task` result).

The demo knows the workspace only through the results of its own tool calls. These pure
functions read that output (skipping the tools' own notes such as "[Showing lines ...]"),
choose which files are worth reading, and fold one episode's results into `Findings`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ink_tui.core.messages import ToolCall, ToolResultMessage

__all__ = [
    "MAX_READS",
    "Findings",
    "count_matches",
    "count_read_lines",
    "gather_findings",
    "last_number",
    "parse_listing",
    "pick_files",
    "stated_test_files",
]

MAX_READS = 2


@dataclass(slots=True)
class Findings:
    """What the tool results of one episode told the model about the workspace."""

    entries: list[str] | None = None  # names from `ls` (directories end with "/")
    listing_cut: bool = False  # the `ls` result did not show every entry
    reads: list[tuple[str, int, int | None]] = field(default_factory=list)  # path, shown, total
    search: tuple[str, int] | None = None  # grep pattern, matching lines
    file_count: int | None = None  # the number the bash command printed
    found: tuple[str, list[str]] | None = None  # find pattern, paths
    failed: list[str] = field(default_factory=list)  # tool names whose call failed
    delegated: bool = False  # the `task` call (the sub-agent) has a result, of any kind
    test_files: int | None = None  # the count a completed sub-agent's answer states


_NOTE = re.compile(r"^(\[.*\s.*\]|\(.*\))$")
_NO_MATCH = re.compile(r"^(no (matches|files|results)|nothing found)\b", re.IGNORECASE)


def _is_note(line: str) -> bool:
    """A tool's remark rather than data: "[Showing lines 1-40 of 90 ...]", "(empty)"."""
    return bool(_NOTE.match(line.strip()))


def _data_lines(content: str) -> list[str]:
    return [line for line in content.splitlines() if line.strip() and not _is_note(line)]


def parse_listing(content: str) -> list[str]:
    """Entry names from an `ls` result, in order; directories keep their trailing "/"."""
    names: list[str] = []
    for line in _data_lines(content):
        name = re.split(r"\t|\s{2,}", line.strip())[0].removeprefix("./")
        if name and not _NO_MATCH.match(name):
            names.append(name)
    return names


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_BINARY = _words(
    "png jpg jpeg gif bmp ico webp svgz pdf zip gz tgz bz2 xz 7z tar whl egg so dylib dll "
    "exe bin o a obj class jar pyc pyo pyd wasm woff woff2 ttf otf eot mp3 mp4 wav ogg mov "
    "avi sqlite sqlite3 db pkl pickle npy npz parquet"
)
_LOCKFILES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock"})
_MANIFESTS = frozenset(
    {"pyproject.toml", "package.json", "cargo.toml", "go.mod", "setup.py", "setup.cfg"}
)
_MAIN_SOURCES = _words(
    "main.py __main__.py app.py cli.py server.py index.js index.ts main.js main.ts main.go "
    "main.rs lib.rs main.c main.cpp"
)
_SOURCE_EXT = _words("py js ts tsx jsx go rs rb java kt c h cpp hpp cs swift sh")
_TEXT_EXT = _words("md rst txt toml yaml yml json cfg ini")
_PLAIN_FILES = frozenset({"makefile", "dockerfile", "license", "justfile", "procfile"})


def _rank(name: str) -> int | None:
    """Lower is more worth reading; None for what is not a readable file."""
    lower = name.lower()
    ext = lower.rsplit(".", 1)[1] if "." in lower.lstrip(".") else ""
    if name.endswith("/") or ext in _BINARY or lower in _LOCKFILES or lower.endswith(".lock"):
        return None
    if lower.startswith("readme"):
        return 0
    if lower in _MANIFESTS:
        return 1
    if lower in _MAIN_SOURCES:
        return 2
    if ext in _SOURCE_EXT:
        return 3
    if ext in _TEXT_EXT or lower in _PLAIN_FILES:
        return 4
    # No extension and not a known file: quite likely a directory the listing did not mark.
    return 5 if ext else 6


def pick_files(entries: Sequence[str], limit: int = MAX_READS) -> list[str]:
    """The `limit` entries most worth reading: README, manifest, main sources, others."""
    ranked = [
        (rank, i, name) for i, name in enumerate(entries) if (rank := _rank(name)) is not None
    ]
    return [name for _, _, name in sorted(ranked)[:limit]]


_TOTAL = re.compile(r"\bof (\d+)\b")


def count_read_lines(content: str) -> tuple[int, int | None]:
    """Lines shown by a `read` result, and the file's total when the tool's note says it."""
    total: int | None = None
    for line in content.splitlines():
        if _is_note(line) and (match := _TOTAL.search(line)):
            total = int(match.group(1))
    return len([line for line in content.splitlines() if not _is_note(line)]), total


def count_matches(content: str) -> int:
    """Matching lines in a `grep` (or paths in a `find`) result."""
    lines = _data_lines(content)
    if not lines or _NO_MATCH.match(lines[0].strip()):
        return 0
    # grep with context prints "path-12-text" lines too; count only "path:12:text" then.
    hits = [line for line in lines if re.search(r":\d+:", line)]
    return len(hits) if hits else len(lines)


def last_number(content: str) -> int | None:
    """The last number a command printed: alone on its line if possible (`wc -l`)."""
    alone = re.findall(r"^\s*(\d+)\s*$", content, re.MULTILINE)
    if alone:
        return int(alone[-1])
    anywhere = re.findall(r"\d+", content)
    return int(anywhere[-1]) if anywhere else None


# How the demo's sub-agent states its count (demo_subagent.py), so its parent can read it.
_TEST_FILES = re.compile(r"\*\*(\d+) test files?\*\*")


def stated_test_files(answer: str) -> int | None:
    """The number of test files a sub-agent's answer states ("**12 test files**")."""
    match = _TEST_FILES.search(answer)
    return int(match.group(1)) if match else None


def gather_findings(calls: Sequence[ToolCall], results: dict[str, ToolResultMessage]) -> Findings:
    """Fold the results of the demo's own calls (in call order) into `Findings`."""
    found = Findings()
    for call in calls:
        result = results.get(call.id)
        if result is None:
            continue
        if result.is_error:
            found.failed.append(call.name)
            found.delegated = found.delegated or call.name == "task"
        elif call.name == "ls":
            found.entries = parse_listing(result.content)
            found.listing_cut = "more entries not shown" in result.content
        elif call.name == "read":
            shown, total = count_read_lines(result.content)
            found.reads.append((str(call.arguments.get("path", "?")), shown, total))
        elif call.name == "grep":
            found.search = (str(call.arguments.get("pattern", "")), count_matches(result.content))
        elif call.name == "bash" and "wc -l" in str(call.arguments.get("command", "")):
            # The command that counts the files (not the plain one the tour also runs).
            found.file_count = last_number(result.content)
        elif call.name == "task":
            found.delegated = True
            found.test_files = stated_test_files(result.content)
        elif call.name == "find":
            paths = [line.strip() for line in _data_lines(result.content)]
            if count_matches(result.content) == 0:
                paths = []
            found.found = (str(call.arguments.get("pattern", "")), paths)
    return found
