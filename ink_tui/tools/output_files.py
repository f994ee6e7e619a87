"""Where the full output of a cut bash command is kept, and how those files go away.

A cut result names a file with the whole output, so the model can read or grep the rest.
Those files live in the user cache folder (`<user_cache_dir("ink")>/outputs`, which
follows XDG_CACHE_HOME on Linux), not in /tmp, and never outlive their use for long:

- On exit, `prune_outputs()` removes the files this process wrote (registered with
  `atexit` on the first file; front ends that leave with `os._exit` call it themselves,
  e.g. from the controller's exit hooks).
- When a process writes its first file, `prune_old_outputs()` removes what earlier
  processes left behind (killed, crashed): files older than a week, then the oldest
  until the folder holds at most 500 MB.

The folder is private (0700) and each file 0600: outputs may hold anything a command
printed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import IO

import platformdirs

PREFIX = "ink-bash-"
SUFFIX = ".log"
MAX_AGE_S = 7 * 24 * 3600
MAX_TOTAL_BYTES = 500 * 1024 * 1024

# Files this process wrote and has not removed yet.
_ours: set[str] = set()
_started = False


def outputs_dir() -> Path:
    return Path(platformdirs.user_cache_dir("ink", appauthor=False)) / "outputs"


def new_output_file() -> IO[bytes]:
    """A new file for one command's full output, in the outputs folder (else the temp
    folder, when the cache cannot be written); removed by `prune_outputs()` at exit."""
    _first_use()
    outputs = outputs_dir()
    folder: Path | None = outputs
    try:
        outputs.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        folder = None
    try:
        file = _named_file(folder)
    except OSError:
        if folder is None:
            raise
        file = _named_file(None)
    _ours.add(file.name)
    return file


def remove_output_file(name: str) -> None:
    """Remove a file made by `new_output_file` before its time (nothing was cut)."""
    _ours.discard(name)
    with contextlib.suppress(OSError):
        os.unlink(name)


def prune_outputs() -> int:
    """Remove every output file this process wrote; the number removed. For exit."""
    removed = 0
    for name in list(_ours):
        _ours.discard(name)
        with contextlib.suppress(OSError):
            os.unlink(name)
            removed += 1
    return removed


def prune_old_outputs(
    folder: Path | None = None,
    *,
    max_age_s: float = MAX_AGE_S,
    max_total_bytes: int = MAX_TOTAL_BYTES,
    now: float | None = None,
) -> int:
    """Remove output files older than `max_age_s`, then the oldest until the rest fit in
    `max_total_bytes`; files of this process are kept. The number removed. Blocking."""
    folder = outputs_dir() if folder is None else folder
    now = time.time() if now is None else now
    files: list[tuple[float, int, str]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not (entry.name.startswith(PREFIX) and entry.name.endswith(SUFFIX)):
                    continue
                if entry.path in _ours:
                    continue
                with contextlib.suppress(OSError):
                    stat = entry.stat(follow_symlinks=False)
                    files.append((stat.st_mtime, stat.st_size, entry.path))
    except OSError:
        return 0
    files.sort()
    total = sum(size for _, size, _ in files)
    removed = 0
    for mtime, size, path in files:
        if now - mtime <= max_age_s and total <= max_total_bytes:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            removed += 1
        total -= size
    return removed


def _first_use() -> None:
    global _started
    if _started:
        return
    _started = True
    atexit.register(prune_outputs)
    prune_old_outputs()


def _named_file(folder: Path | None) -> IO[bytes]:
    # Kept open across pipe reads and closed by the capture, so not a `with`.
    return tempfile.NamedTemporaryFile(
        prefix=f"{PREFIX}{os.getpid()}-", suffix=SUFFIX, dir=folder, delete=False
    )
