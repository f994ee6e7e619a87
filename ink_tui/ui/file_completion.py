"""Candidates for `@path` completion in the input box: the workspace's files and folders.

The listing walks the workspace the way git sees it (`ink_tui.tools.walk`: .gitignore
honoured, .git and symlinks skipped), in a thread so a large tree never stalls the screen.
It is built on first use and rebuilt lazily when older than `max_age` seconds, which is
simpler than watching the file system and fresh enough for typing a path. It is capped
(`max_paths`) so a workspace that forgot to ignore a huge folder still completes quickly.

Ranking (`rank_paths`), case-insensitive, each tier shorter paths first:

1. the path starts with the fragment ("src/ma" → "src/main.py");
2. a path component starts with it ("REA" → "docs/README.md");
3. the fragment's characters appear in order (fuzzy: "smp" → "src/main.py").

Folders end with "/" so that accepting one lets the user continue into it.
"""

from __future__ import annotations

import asyncio
import heapq
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

MAX_PATHS = 20_000
MAX_AGE_S = 5.0
DEFAULT_LIMIT = 20


def list_workspace(workspace: Path, max_paths: int = MAX_PATHS) -> list[str]:
    """Files and folders under `workspace` (relative, "/"-separated, folders ending in
    "/"), not ignored, at most `max_paths`. Blocking: run it in a thread.

    Folders are those holding at least one listed file: the walker yields files only,
    and a folder with nothing to offer inside is not worth completing to.
    """
    # Imported on first use: the walker brings pathspec, not needed for the first frame.
    from ink_tui.tools.walk import walk_files

    paths: list[str] = []
    folders: set[str] = set()

    def full() -> bool:
        return len(paths) >= max_paths

    for file in walk_files(workspace, workspace, should_stop=full):
        relative = file.relative_to(workspace).as_posix()
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth]) + "/"
            if folder not in folders and not full():
                folders.add(folder)
                paths.append(folder)
        if full():
            break
        paths.append(relative)
    return paths


def rank_paths(paths: Iterable[str], fragment: str, limit: int = DEFAULT_LIMIT) -> list[str]:
    """The best `limit` of `paths` for `fragment`, best first (see the module docstring)."""
    wanted = fragment.lower()
    # The subsequence test runs over every path on every keystroke; a regex keeps it in C.
    fuzzy = re.compile(".*?".join(re.escape(char) for char in wanted))

    def ranked() -> Iterable[tuple[int, int, str]]:
        for path in paths:
            lowered = path.lower()
            if path.endswith("/") and lowered == wanted:
                # The folder just accepted: offer what is inside it, not itself again.
                continue
            if lowered.startswith(wanted):
                tier = 0
            elif ("/" + lowered).find("/" + wanted) >= 0:
                tier = 1
            elif fuzzy.search(lowered):
                tier = 2
            else:
                continue
            yield tier, len(path), path

    return [path for _, _, path in heapq.nsmallest(limit, ranked())]


@dataclass(frozen=True, slots=True)
class FileToken:
    """An `@fragment` under the cursor."""

    start: int
    """Offset of the `@`."""
    end: int
    """Offset just past the token (the next whitespace, or the end of the text)."""
    fragment: str
    """What was typed between the `@` and the cursor."""


def current_token(text: str, cursor_offset: int) -> FileToken | None:
    """The `@fragment` the cursor is in, or None.

    The `@` must start the text or follow whitespace (so "me@example.com" is not one), and
    no whitespace may lie between it and the cursor.
    """
    start = cursor_offset
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    if start >= cursor_offset or text[start] != "@":
        return None
    end = cursor_offset
    while end < len(text) and not text[end].isspace():
        end += 1
    return FileToken(start, end, text[start + 1 : cursor_offset])


class FileIndex:
    """The workspace listing for completion: built off the event loop, refreshed lazily.

    `matches` is synchronous and answers from the last listing (empty before the first);
    `refresh` (async) rebuilds it when stale. Callers ask `matches` at once and, if
    `is_stale`, `await refresh()` and ask again.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        max_paths: int = MAX_PATHS,
        max_age: float = MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workspace = workspace
        self.max_paths = max_paths
        self.max_age = max_age
        self._clock = clock
        self._paths: list[str] = []
        self._built_at: float | None = None
        # One walk at a time: callers arriving while it runs wait for the same result.
        self._pending: asyncio.Task[list[str]] | None = None

    @property
    def paths(self) -> list[str]:
        """A copy of the last listing."""
        return list(self._paths)

    @property
    def is_stale(self) -> bool:
        """True before the first listing and once it is older than `max_age`."""
        return self._built_at is None or self._clock() - self._built_at > self.max_age

    async def refresh(self, *, force: bool = False) -> bool:
        """Rebuild the listing in a thread if it is stale (or `force`). Returns whether a
        new listing was stored."""
        if not force and not self.is_stale:
            return False
        task = self._pending
        if task is None:
            task = asyncio.ensure_future(
                asyncio.to_thread(list_workspace, self.workspace, self.max_paths)
            )
            self._pending = task
        try:
            # Shielded: a caller that gives up (a cancelled worker) must not cancel the
            # walk that other callers are waiting for.
            paths = await asyncio.shield(task)
        finally:
            if task.done() and self._pending is task:
                self._pending = None
        self._paths = paths
        self._built_at = self._clock()
        return True

    def matches(self, fragment: str, limit: int = DEFAULT_LIMIT) -> list[str]:
        """The best paths for `fragment` from the last listing, best first."""
        return rank_paths(self._paths, fragment, limit)
