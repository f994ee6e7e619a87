"""The one error the checkpoint store raises for things the user can act on."""

from __future__ import annotations


class CheckpointError(Exception):
    """A checkpoint could not be taken, compared or restored.

    `str()` is a whole sentence for the user: what failed and what to do about it (install
    git, free the store's folder, raise a limit, move a symbolic link away).
    """
