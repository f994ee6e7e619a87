"""Going back in an `AgentSession`: the tree, rewind, undo, move, fork.

The same operations as RPC's `get_tree`, `rewind`, `fork` (pi's names where pi has
them) and ink serve's routes, carried out by the session's `SessionRewind` (see
session/rewind.py for what each does). A session opened with `record=False` has no
file, so no tree: each raises `RewindRefused` saying so. Busy: `RewindRefused` too.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ink_tui.session.rewind import RewindRefused

if TYPE_CHECKING:
    from ink_tui.session.rewind import SessionRewind


class GoingBack:
    """Mixed into `AgentSession` (api/session.py), which sets `_rewind`."""

    _rewind: SessionRewind | None

    def _going_back(self) -> SessionRewind:
        if self._rewind is None:
            raise RewindRefused("this session is not recorded (record=False): it has no tree")
        return self._rewind

    async def tree(self) -> dict[str, Any]:
        """`{tree: [{id, parent_id, role, text, time, on_branch, ...}], leaf_id}`: every
        entry of every branch; `leaf_id` is where the conversation goes on."""
        return await self._going_back().tree()

    async def user_messages(self) -> list[dict[str, Any]]:
        """The user's messages on the current branch, oldest first: what a rewind can go
        back to, each with `entry_id`, `text`, `time` and the files its run changed."""
        return [asdict(turn) for turn in await self._going_back().user_turns()]

    async def rewind_preview(self, entry_id: str) -> dict[str, Any]:
        """What rewinding the files to `entry_id` would change, before asking:
        `{entry_id, text, checkpoint, files: [{path, status, added, removed}]}`."""
        preview = await self._going_back().preview(entry_id)
        return {
            "entry_id": preview.entry_id,
            "text": preview.text,
            "checkpoint": preview.checkpoint,
            "files": [asdict(change) for change in preview.changes],
        }

    async def rewind(self, entry_id: str, restore: str = "both") -> dict[str, Any]:
        """Go back to the user message `entry_id`: restore "conversation", "files" or
        "both". Returns `{text, restored_files}` (the message's text, for an editor)."""
        result = await self._going_back().rewind(entry_id, restore)
        return {"text": result.text, "restored_files": result.restored_files}

    async def undo_rewind(self) -> dict[str, Any]:
        """Undo the last file restore (a rewind's, or an undo's): `{restored_files}`."""
        result = await self._going_back().undo_files()
        return {"restored_files": result.restored_files}

    async def navigate_tree(self, entry_id: str) -> dict[str, Any]:
        """Go on from `entry_id` on any branch (a user message: from just before it).
        Files stay as they are. Returns `{text, leaf_id}`."""
        result = await self._going_back().move(entry_id)
        return {"text": result.text, "leaf_id": result.leaf_id}

    async def fork(self, entry_id: str) -> dict[str, Any]:
        """A new saved session holding this branch up to just before the user message
        `entry_id`; this one is unchanged. Returns `{session_id, session_file, text}`:
        open it with `AgentSession.open(resume=session_id)`."""
        forked = await self._going_back().fork(entry_id)
        return {
            "session_id": forked.session_id,
            "session_file": str(forked.path),
            "text": forked.text,
        }
