"""grep without ripgrep: Python `re` over a gitignore-aware walk, binary files skipped."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.binary import looks_binary
from ink_tui.tools.globs import glob_override
from ink_tui.tools.grep_common import GrepMatches, GrepQuery
from ink_tui.tools.paths import workspace_root
from ink_tui.tools.truncate import split_lines
from ink_tui.tools.walk import walk_files


def compile_pattern(query: GrepQuery) -> re.Pattern[str]:
    flags = re.IGNORECASE if query.ignore_case else 0
    try:
        return re.compile(query.pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regex {query.pattern!r}: {exc}") from None


def search_python(query: GrepQuery, matches: GrepMatches, should_stop: Callable[[], bool]) -> None:
    """Fill `matches` in ripgrep's `--sort path` order. Blocking: run in a thread."""
    regex = compile_pattern(query)
    root = workspace_root(query.workspace)
    if query.target.is_file():
        # Like rg, a file named explicitly is searched whatever the globs and ignores say.
        files: Iterable[Path] = [query.target]
    else:
        override = glob_override(query.glob) if query.glob else None
        files = walk_files(query.target, root, override=override, should_stop=should_stop)
    for path in files:
        if should_stop():
            return
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if looks_binary(data):
            continue
        # Lossy like rg: a stray bad byte should not hide the rest of the file.
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(split_lines(text), start=1):
            if regex.search(line) and not matches.add(path, number, line):
                return
