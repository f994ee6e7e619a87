"""Writing and deleting files inside a workspace, never through a symbolic link.

A restore writes paths that come from a checkpoint, into a tree the user (or a command)
may have changed since. Every operation walks from the workspace root one directory at
a time, each opened relative to the last with `O_NOFOLLOW` (`dir_fd`), so a directory
replaced by a symbolic link, even between a check and the write, stops the walk
(`LinkedParent`) instead of leading it outside the workspace. The last component is
replaced, not followed: a file is written under a temporary name in its directory and
renamed over the old entry (a symbolic link there is replaced by the file, its target
left alone).

Paths are relative and "/"-separated, as git writes them. Components "", ".", ".." and
".git" (any case) are refused: git never stores them, and the user's own repository is
never written to.

Blocking: small files, called from a thread (store.py).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path


class UnsafePath(Exception):
    """A path that cannot be written without leaving the workspace or entering `.git`."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class Blocked(Exception):
    """A file (not a directory) stands where the path needs a parent directory."""


# Makes a new entry (file or link) of the given name in the open directory.
_Maker = Callable[[int, bytes], object]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def split(path: str) -> list[str]:
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", "..") or part.casefold() == ".git":
            raise UnsafePath(path, f"the name {part!r} is never written")
    return parts


class WorkspaceFiles:
    def __init__(self, root: Path) -> None:
        self._root = os.fsencode(root)

    def linked_parent(self, path: str) -> str | None:
        """The first parent directory of `path` that is a symbolic link, if any."""
        parts = split(path)
        current = self._root
        for index, part in enumerate(parts[:-1]):
            current = os.path.join(current, os.fsencode(part))
            try:
                mode = os.lstat(current).st_mode
            except OSError:
                return None
            if stat.S_ISLNK(mode):
                return "/".join(parts[: index + 1])
            if not stat.S_ISDIR(mode):
                return None
        return None

    def kind(self, path: str) -> str:
        """What is at `path`, links not followed: missing, file, link, dir or other."""
        with self._parent(path, create=False) as (fd, name):
            if fd is None:
                return "missing"
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                return "missing"
        if stat.S_ISREG(mode):
            return "file"
        if stat.S_ISLNK(mode):
            return "link"
        return "dir" if stat.S_ISDIR(mode) else "other"

    def size(self, path: str) -> int | None:
        """The size of a regular file at `path`, None when there is none."""
        with self._parent(path, create=False) as (fd, name):
            if fd is None:
                return None
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return None
        return info.st_size if stat.S_ISREG(info.st_mode) else None

    def remove(self, path: str) -> bool:
        """Delete the file or link at `path`; False when there was none (or a directory)."""
        with self._parent(path, create=False) as (fd, name):
            if fd is None:
                return False
            try:
                os.unlink(name, dir_fd=fd)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return False
            except PermissionError:
                # Linux says EISDIR, some systems EPERM, for unlink of a directory.
                if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    return False
                raise
        return True

    def prune(self, path: str) -> None:
        """Remove the parent directories of `path` that are empty, deepest first."""
        parts = split(path)
        for end in range(len(parts) - 1, 0, -1):
            parent = "/".join(parts[:end])
            with self._parent(parent, create=False) as (fd, name):
                if fd is None:
                    continue
                try:
                    os.rmdir(name, dir_fd=fd)
                except OSError:
                    return  # not empty (or not ours to remove): neither are its parents

    def write(self, path: str, data: bytes, *, executable: bool) -> bool:
        """Make `path` a regular file holding `data`; False when a directory is there."""
        return self._replace(path, lambda fd, temp: _write_file(fd, temp, data, executable))

    def symlink(self, path: str, target: bytes) -> bool:
        """Make `path` a symbolic link to `target`; False when a directory is there."""
        return self._replace(path, lambda fd, temp: os.symlink(target, temp, dir_fd=fd))

    def _replace(self, path: str, make: _Maker) -> bool:
        try:
            with self._parent(path, create=True) as (fd, name):
                assert fd is not None
                with contextlib.suppress(FileNotFoundError):
                    if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        return False
                temp = f".ink-restore-{secrets.token_hex(6)}".encode()
                make(fd, temp)
                try:
                    os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(temp, dir_fd=fd)
                    raise
        except Blocked:
            return False
        return True

    @contextlib.contextmanager
    def _parent(self, path: str, *, create: bool) -> Iterator[tuple[int | None, bytes]]:
        """The open directory holding `path`'s last component (None when missing and not
        `create`), and that component's name."""
        parts = split(path)
        fd = os.open(self._root, _DIR_FLAGS)
        try:
            for index, part in enumerate(parts[:-1]):
                name = os.fsencode(part)
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        yield None, os.fsencode(parts[-1])
                        return
                    os.mkdir(name, 0o777, dir_fd=fd)
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as error:
                    if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                    if stat.S_ISLNK(mode):
                        where = "/".join(parts[: index + 1])
                        raise UnsafePath(path, f"{where} is a symbolic link") from None
                    if not create:
                        # A file where a directory would be: nothing is at `path`.
                        yield None, os.fsencode(parts[-1])
                        return
                    raise Blocked(path) from None
                os.close(fd)
                fd = child
            yield fd, os.fsencode(parts[-1])
        finally:
            os.close(fd)


def _write_file(fd: int, temp: bytes, data: bytes, executable: bool) -> None:
    # Modes as git checks files out: 0o777 or 0o666, less the umask.
    mode = 0o777 if executable else 0o666
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    out = os.open(temp, flags, mode, dir_fd=fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
    finally:
        os.close(out)
