"""Workspace checkpoints: snapshots of the workspace's files in a git object store outside
it, compared and restored without touching the user's own repository (store.py)."""

from __future__ import annotations

from ink_tui.checkpoints.errors import CheckpointError
from ink_tui.checkpoints.limits import CheckpointLimits
from ink_tui.checkpoints.store import CheckpointStore, Restored
from ink_tui.checkpoints.tree_diff import FileChange

__all__ = ["CheckpointError", "CheckpointLimits", "CheckpointStore", "FileChange", "Restored"]
