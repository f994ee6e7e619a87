"""Where a path argument really points: one judgement for the tools and the approval gate.

The file system resolves a path one component at a time: a symlink is replaced by where
it points before the next component is looked at, so a `..` after a symlink climbs from
the link's target, not from the folder holding the link. With `a -> x/y`, `a/../f` is
`x/f`; removing the `..` as text first (`os.path.normpath`) gives `f`, another file.
`path_target` resolves the way the file system does (join with the workspace when
relative, then follow each symlink in order and apply `..` to what is resolved so far,
as `os.path.realpath(strict=False)` means to), and `write`, `edit`, `read` and `ls`
open the path it returns, so the file the approval gate judged is the file they open.

It does not call `os.path.realpath`: up to Python 3.12 that one, on a symlink loop
followed by a repeated slash (`loop//etc/x`), returns `/etc/x`, a path the file system
would never open. Here a loop (more than 40 links, the kernel's limit) stops the
resolution at the link, so the tool's open fails on it and nothing is written.

`open_resolved` opens such a path without following any symlink on the way, creating
missing folders when asked: a symlink put in place after the path was resolved (by a
command running meanwhile) makes the open fail instead of sending the write elsewhere.
Where the platform cannot open relative to a folder (`dir_fd`, e.g. Windows), it
resolves the path again just before opening and refuses when the answer changed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# Symlinks followed in one resolution before it counts as a loop (Linux's MAXSYMLINKS).
MAX_LINKS = 40
# Opening a folder or a file relative to an open folder, without following a symlink.
_WALKS = bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd
# Folders on the way are opened only to open what is in them: Linux's O_PATH needs no
# read permission (a folder one may pass through but not list still works).
_FOLDER = getattr(os, "O_PATH", os.O_RDONLY) | _DIRECTORY | _CLOEXEC


class PathChangedError(OSError):
    """A symlink is where the resolved path had none: it changed after it was resolved."""


@dataclass(frozen=True, slots=True)
class PathTarget:
    """A path argument, judged. `real` is what a tool opens."""

    # As the model wrote it.
    raw: str
    # The file the file system opens for it: every symlink followed, in order, and each
    # `..` applied to what was resolved before it.
    real: Path
    # The file a person reading the text would expect: `..` removed as text first, then
    # symlinks followed. The same as `real` unless a `..` comes after a symlink.
    as_written: Path
    # The workspace's real path.
    root: Path

    @property
    def inside(self) -> bool:
        """Whether `real` is the workspace or inside it."""
        return self.real.is_relative_to(self.root)

    @property
    def relative(self) -> Path | None:
        """`real` relative to the workspace; None when it is outside."""
        return self.real.relative_to(self.root) if self.inside else None

    @property
    def shown(self) -> str:
        """`real` as messages show it: workspace-relative POSIX, else absolute."""
        return shown_path(self.root, self.real)

    @property
    def differs(self) -> bool:
        """Whether the text reads as another file than the one that is opened."""
        return self.as_written != self.real


def real_root(workspace: Path) -> Path:
    """The workspace's real path (absolute, symlinks resolved)."""
    return resolve(os.path.abspath(workspace))


def resolve(path: str) -> Path:
    """The absolute `path` as the file system resolves it: each component in turn, a
    symlink replaced by its target before the next, `..` taken from what is resolved so
    far. Missing components are kept as they are (so is the rest after a symlink loop).
    Blocking (an `lstat` per component)."""
    if os.name != "posix":
        return Path(os.path.realpath(path))
    pending = _components(path)
    resolved = "/"
    links = 0
    while pending:
        name = pending.pop()
        if name == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, name)
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
            link = os.readlink(candidate) if is_link else ""
        except OSError:
            is_link = False
        if not is_link:
            resolved = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            # A loop: stop at the link, which the open will refuse to follow.
            return Path(candidate, *reversed(pending))
        if link.startswith("/"):
            resolved = "/"
        pending.extend(_components(link))
    return Path(resolved)


def _components(path: str) -> list[str]:
    """The names of `path`, last first (a stack), without empty ones and `.`."""
    return [name for name in reversed(path.split("/")) if name not in ("", ".")]


def joined(workspace: Path, raw: str) -> str:
    """The argument as an absolute path, nothing resolved: `~` expanded, joined with the
    workspace when relative."""
    path = os.path.expanduser(raw)
    if not os.path.isabs(path):
        path = os.path.join(os.path.abspath(workspace), path)
    return path


def path_target(workspace: Path, raw: str) -> PathTarget:
    """Judge the path argument `raw` of a tool run in `workspace` (blocking: it reads
    symlinks; cheap, a few `lstat` calls)."""
    full = joined(workspace, raw)
    return PathTarget(
        raw=raw,
        real=resolve(full),
        as_written=resolve(os.path.normpath(full)),
        root=real_root(workspace),
    )


def shown_path(root: Path, path: Path) -> str:
    try:
        relative = path.relative_to(root)
    except ValueError:
        return str(path)
    return relative.as_posix() if relative.parts else "."


def open_resolved(real: Path, flags: int, mode: int = 0o666, *, make_parents: bool = False) -> int:
    """Open `real` (a `PathTarget.real`) and return the descriptor; no symlink on the way
    or at the end is followed. `make_parents` creates missing folders first.

    Raises `PathChangedError` when a symlink is found where the resolution saw none, and
    the usual `OSError`s otherwise (`NotADirectoryError` when a file is where a folder
    should be).
    """
    if not _WALKS:
        return _open_checked(real, flags, mode, make_parents)
    parts = real.parts
    folder = os.open(parts[0], _FOLDER)
    try:
        for name in parts[1:-1]:
            inner = _open_folder(folder, name, make_parents)
            os.close(folder)
            folder = inner
        name = parts[-1] if len(parts) > 1 else "."
        try:
            return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=folder)
        except OSError as error:
            _raise_if_link(error, folder, name)
            raise
    finally:
        os.close(folder)


def _open_folder(folder: int, name: str, make: bool) -> int:
    flags = _FOLDER | _NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=folder)
    except FileNotFoundError:
        if not make:
            raise
    except OSError as error:
        _raise_if_link(error, folder, name)
        raise
    # Made meanwhile: it is opened (and checked) below all the same.
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=folder)
    try:
        return os.open(name, flags, dir_fd=folder)
    except OSError as error:
        _raise_if_link(error, folder, name)
        raise


def _raise_if_link(error: OSError, folder: int, name: str) -> None:
    if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return
    if is_link:
        raise PathChangedError(errno.ELOOP, f"{name} is a symlink") from None


def _open_checked(real: Path, flags: int, mode: int, make_parents: bool) -> int:
    """Without `dir_fd`: resolve again right before opening; refuse if it moved."""
    if make_parents:
        real.parent.mkdir(parents=True, exist_ok=True)
    if resolve(str(real)) != real:
        raise PathChangedError(errno.ELOOP, f"{real} now leads through a symlink")
    return os.open(real, flags | _NOFOLLOW | _CLOEXEC, mode)
