"""Instruction files the model reads first: AGENTS.md, or CLAUDE.md where there is none.

Order matters because later text wins when instructions conflict: the user's own file
(in the config folder) first, then every folder from the filesystem root down to the
workspace, so the most specific instructions come last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ink_tui.session.config_files import display_path
from ink_tui.session.config_files import user_config_dir as default_user_config_dir

NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_BYTES = 100 * 1024


@dataclass(frozen=True, slots=True)
class ContextFile:
    path: Path
    text: str
    # Size on disk, which may exceed len(text) when the file was cut.
    size: int = 0
    # "truncated to 100 KB of 250 KB", or why the file was skipped.
    note: str | None = None
    # Skipped files are listed (so /context can say why) but give the model no text.
    skipped: bool = False


def find_context_files(
    workspace: Path, user_config_dir: Path | None = None, *, max_bytes: int = MAX_BYTES
) -> list[ContextFile]:
    user_dir = default_user_config_dir() if user_config_dir is None else user_config_dir
    workspace = workspace.resolve()
    folders = [user_dir, *reversed(workspace.parents), workspace]
    found: list[ContextFile] = []
    seen: set[Path] = set()
    for folder in folders:
        path = _pick(folder)
        if path is None or path.resolve() in seen:
            continue
        seen.add(path.resolve())
        found.append(read_context_file(path, max_bytes))
    return found


def _pick(folder: Path) -> Path | None:
    for name in NAMES:
        path = folder / name
        try:
            if path.is_file():
                return path
        except OSError:
            continue
    return None


def read_context_file(path: Path, max_bytes: int = MAX_BYTES) -> ContextFile:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        return ContextFile(path, "", 0, f"skipped: cannot read ({error.strerror})", True)
    truncated = len(data) > max_bytes
    data = data[:max_bytes]
    text = _decode(data, truncated)
    if text is None:
        return ContextFile(path, "", size, "skipped: not UTF-8 text", True)
    note = f"truncated to {format_size(max_bytes)} of {format_size(size)}" if truncated else None
    return ContextFile(path, text, size, note)


def _decode(data: bytes, truncated: bool) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        # The cut may fall inside a multi-byte character; that is not a binary file.
        if truncated and error.start >= len(data) - 3 and error.end == len(data):
            return data[: error.start].decode("utf-8", errors="replace")
        return None


def format_size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    return f"{count / 1024:.1f} KB".replace(".0 KB", " KB")


def render_context_report(files: Sequence[ContextFile], workspace: Path | None = None) -> str:
    """The text `/context` shows: the files loaded, in the order the model reads them."""
    loaded = [f for f in files if not f.skipped]
    skipped = [f for f in files if f.skipped]
    if not files:
        where = f" from / down to {workspace}" if workspace is not None else ""
        return (
            "No context files loaded. ink reads AGENTS.md (or CLAUDE.md) from its config "
            f"folder and from every folder{where}."
        )
    lines = [f"Context files ({len(loaded)} loaded, in the order the model reads them):"]
    rows = [
        (f"{n}.", display_path(f.path), format_size(f.size), f.note or "")
        for n, f in enumerate(loaded, 1)
    ]
    rows += [("-", display_path(f.path), "", f.note or "") for f in skipped]
    lines += align(rows)
    return "\n".join(lines)


def align(rows: Sequence[tuple[str, ...]], indent: int = 2) -> list[str]:
    """Rows as lines with every column padded to its widest cell."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        (
            " " * indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
