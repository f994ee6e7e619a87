"""How much a checkpoint may capture, and which files it leaves out.

A snapshot looks only at what git lists as new or changed since the session's index
(store.py), so these rules cost a `lstat` per listed path, not per workspace file:

- a regular file bigger than `max_file_bytes`, or one this process may not read, is
  left out and named in `skipped` (it is not in the checkpoint: a file captured small
  and grown big since is taken out of it, never kept at its old content);
- sockets, FIFOs and devices are left out silently (git cannot store them);
- a directory listed with a trailing "/" is a nested git repository: git would store
  it as a submodule link, so it is left out silently, with all its files;
- a captured path whose directory has become a symbolic link is taken out (git would
  refuse it, and what lies behind the link is not the workspace's);
- the new and changed files that remain may number at most `max_new_files` and weigh at
  most `max_new_bytes`: past either the snapshot fails (`CheckpointError`) rather than
  copy a forgotten `node_modules` or a data set into the store.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ink_tui.checkpoints.errors import CheckpointError


@dataclass(frozen=True, slots=True)
class CheckpointLimits:
    max_file_bytes: int = 10 * 1024 * 1024  # bigger files are not captured (nor restored/deleted)
    max_new_files: int = 50_000  # a snapshot that would add more files than this fails
    max_new_bytes: int = 500 * 1024 * 1024  # same, for bytes of new/changed files


@dataclass(slots=True)
class SnapshotPlan:
    """What one snapshot does to the session's index."""

    # Paths for `git update-index --add --remove --replace`: hashed when present, taken
    # out of the index when gone (or when a directory now stands where a file was).
    update: list[str] = field(default_factory=list)
    # Paths in the index that must go although they exist: too big, unreadable, special.
    drop: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    new_files: int = 0
    new_bytes: int = 0


def plan_snapshot(
    workspace: Path, listed: list[tuple[str, bool]], limits: CheckpointLimits
) -> SnapshotPlan:
    """Sort git's list of new and changed paths (`(path, tracked)`) by the rules above.

    Blocking (a `lstat` each): run it in a thread for long lists.
    """
    plan = SnapshotPlan()
    root = os.fsencode(workspace)
    linked = _LinkedDirs(root)
    for path, tracked in listed:
        if path.endswith("/"):
            continue  # a nested repository
        if tracked and linked.under_link(path):
            # Its directory became a symbolic link: what lies there is not ours (and
            # `lstat` would follow the link), the path is gone from the workspace.
            plan.drop.append(path)
            continue
        full = os.path.join(root, os.fsencode(path))
        try:
            info = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            plan.update.append(path)  # gone: update-index takes it out
            continue
        except OSError:
            _leave_out(plan, path, tracked, report=True)
            continue
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            plan.update.append(path)  # a file became a directory: update-index drops it
        elif stat.S_ISLNK(mode):
            _count(plan, path, info.st_size)
        elif not stat.S_ISREG(mode):
            _leave_out(plan, path, tracked, report=False)
        elif info.st_size > limits.max_file_bytes or not os.access(full, os.R_OK):
            _leave_out(plan, path, tracked, report=True)
        else:
            _count(plan, path, info.st_size)
    check_plan(plan, limits)
    return plan


def check_plan(plan: SnapshotPlan, limits: CheckpointLimits) -> None:
    """CheckpointError when the plan passes `max_new_files` or `max_new_bytes`."""
    advice = (
        "Add generated or downloaded folders (build output, node_modules, data) to "
        ".gitignore, or raise CheckpointLimits.{name}."
    )
    if plan.new_files > limits.max_new_files:
        raise CheckpointError(
            f"No checkpoint taken: {plan.new_files:,} new or changed files to capture, more "
            f"than the limit of {limits.max_new_files:,}. " + advice.format(name="max_new_files")
        )
    if plan.new_bytes > limits.max_new_bytes:
        raise CheckpointError(
            f"No checkpoint taken: {_mib(plan.new_bytes)} of new or changed files to "
            f"capture, more than the limit of {_mib(limits.max_new_bytes)}. "
            + advice.format(name="max_new_bytes")
        )


class _LinkedDirs:
    """Which directories of the workspace are symbolic links, or lie under one (cached)."""

    def __init__(self, root: bytes) -> None:
        self._root = root
        self._known: dict[str, bool] = {"": False}

    def under_link(self, path: str) -> bool:
        return self._linked(path.rpartition("/")[0])

    def _linked(self, folder: str) -> bool:
        known = self._known.get(folder)
        if known is None:
            parent, _, _ = folder.rpartition("/")
            full = os.path.join(self._root, os.fsencode(folder))
            known = self._linked(parent) or os.path.islink(full)
            self._known[folder] = known
        return known


def _count(plan: SnapshotPlan, path: str, size: int) -> None:
    plan.update.append(path)
    plan.new_files += 1
    plan.new_bytes += size


def _leave_out(plan: SnapshotPlan, path: str, tracked: bool, *, report: bool) -> None:
    if tracked:
        plan.drop.append(path)
    if report:
        plan.skipped.append(path)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):,.1f} MiB"
