"""Going back: rewind to an earlier message, move to another branch, fork, undo.

One object per recorded session (`SessionRewind`), shared by every front end (the TUI,
the Python API, RPC, `ink serve`), so they all go back the same way:

- `rewind(entry_id, restore)`: to the user message `entry_id` on the current branch.
  "conversation": the leaf moves to just before it (its text is handed back for the
  editor, and the history becomes that branch's); "files": the workspace's files go
  back to the first checkpoint after it (none after it: nothing changed them since);
  "both". The entries after it stay in the file: a branch `tree` can return to.
- `preview(entry_id)`: what restoring the files would change, before asking.
- `undo_files()`: the last file restore undone (its `files_from` checkpoint, taken just
  before it, restored; undoing an undo redoes).
- `move(entry_id)`: the leaf to any entry (`/tree`): a user message's text comes back
  as for a rewind; files stay as they are.
- `fork(entry_id)`: a new session file holding the branch up to just before the user
  message `entry_id`; this one is left as it is.

Only while idle (`RewindRefused` otherwise): a run's history must not change under it,
and the queue is never touched. The file is read back for each (after the writer has
written everything queued): going back is rare, and the file is the one full record of
every branch, which nothing else keeps in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ink_tui.core.events import Rewound
from ink_tui.session.entries import (
    AssistantEntry,
    CheckpointEntry,
    CompactionEntry,
    Entry,
    ErrorEntry,
    InterruptEntry,
    ModelChangeEntry,
    RewindEntry,
    RewindRestore,
    SubagentEntry,
    ToolResultEntry,
    UserEntry,
)
from ink_tui.session.session_reader import LoadedSession, branch_history, load_session
from ink_tui.session.session_tree import SessionTree, TreeNode
from ink_tui.session.session_writer import SessionWriter

if TYPE_CHECKING:
    from ink_tui.checkpoints import CheckpointStore, FileChange
    from ink_tui.control.controller import RunController

T = TypeVar("T")
Restore = Literal["conversation", "files", "both"]
RESTORES: tuple[Restore, ...] = ("conversation", "files", "both")
# How much of an answer the tree shows of each reply.
TREE_TEXT_CHARS = 400


RefusalKind = Literal["busy", "not_found", "not_a_message", "refused"]


class RewindRefused(RuntimeError):
    """Going back is not possible now; `str()` says why, for the user, and `kind` what
    kind of refusal it is for programs: "busy" (a run is in progress), "not_found" (no
    such entry), "not_a_message" (the entry is not one of the user's messages), or
    "refused" (another branch, nothing to undo, checkpoints off, a restore that failed)."""

    def __init__(self, message: str, kind: RefusalKind = "refused") -> None:
        super().__init__(message)
        self.kind: RefusalKind = kind


@dataclass(slots=True)
class RewindPreview:
    entry_id: str
    text: str
    # The checkpoint the files would go back to; None: nothing changed them since.
    checkpoint: str | None
    changes: list[FileChange] = field(default_factory=list)


@dataclass(slots=True)
class RewindResult:
    text: str
    restored_files: list[str]
    leaf_id: str | None


@dataclass(slots=True)
class Forked:
    session_id: str
    path: Path
    text: str


@dataclass(slots=True)
class UserTurn:
    """One of the user's messages on the branch, for the rewind picker."""

    entry_id: str
    text: str
    kind: str
    time: str | None
    # The files its run changed (from its first checkpoint to the next run's, or to now).
    changed_files: list[str]
    has_checkpoint: bool


class SessionRewind:
    def __init__(
        self,
        controller: RunController,
        writer: SessionWriter,
        store: CheckpointStore | None,
        *,
        root: Path | None = None,
    ) -> None:
        self.controller = controller
        self.writer = writer
        self.store = store
        self.root = root

    # -- reading ------------------------------------------------------------------------

    async def load(self) -> LoadedSession:
        writer = self.writer

        def read() -> LoadedSession:
            writer.drain()
            return load_session(writer.path)

        return await asyncio.to_thread(read)

    async def tree(self) -> dict[str, Any]:
        """RPC `get_tree`: every entry of every branch, and the leaf."""
        loaded = await self.load()
        on_branch = {node.id for node in loaded.tree.branch}
        return {
            "tree": [tree_item(node, node.id in on_branch) for node in loaded.tree.nodes],
            "leaf_id": loaded.tree.leaf_id,
        }

    async def user_turns(self) -> list[UserTurn]:
        """The user's messages on the branch, oldest first, each with what its run changed."""
        loaded = await self.load()
        branch = loaded.tree.branch
        starts = [i for i, node in enumerate(branch) if isinstance(node.entry, UserEntry)]
        turns: list[UserTurn] = []
        now: str | None = None
        for number, start in enumerate(starts):
            end = starts[number + 1] if number + 1 < len(starts) else len(branch)
            own = _first_checkpoint(branch[start:end])
            changed: list[str] = []
            if own is not None and self.store is not None:
                later = _first_checkpoint(branch[end:])
                if later is None:
                    if now is None:
                        now = await self._snapshot_or_none()
                    later = now
                if later is not None and later != own:
                    changed = [c.path for c in await self._diff(own, later)]
            node = branch[start]
            assert isinstance(node.entry, UserEntry)
            turns.append(
                UserTurn(
                    entry_id=node.id,
                    text=node.entry.message.content,
                    kind=node.entry.message.kind,
                    time=node.time.isoformat() if node.time is not None else None,
                    changed_files=changed,
                    has_checkpoint=own is not None,
                )
            )
        return turns

    async def preview(self, entry_id: str) -> RewindPreview:
        """What a rewind of files to `entry_id` would change (a checkpoint of now is
        taken to compare with)."""
        loaded = await self.load()
        node, after = self._user_message(loaded.tree, entry_id)
        assert isinstance(node.entry, UserEntry)
        target = _first_checkpoint(after)
        preview = RewindPreview(entry_id, node.entry.message.content, target)
        if target is not None:
            store = self._store()
            now = await self._snapshot(store)
            preview.changes = await self._diff(now, target)
        return preview

    # -- going back ---------------------------------------------------------------------

    async def rewind(self, entry_id: str, restore: str) -> RewindResult:
        if restore not in RESTORES:
            raise ValueError(f"restore must be 'conversation', 'files' or 'both', not {restore!r}")
        self._check_idle()
        loaded = await self.load()
        node, after = self._user_message(loaded.tree, entry_id)
        assert isinstance(node.entry, UserEntry)
        text = node.entry.message.content
        files_from = files_to = None
        restored: list[str] = []
        if restore in ("files", "both"):
            files_to = _first_checkpoint(after)
            if files_to is not None:
                store = self._store()
                self._check_idle()
                done = await _checked(store.restore(files_to))
                files_from = done.before
                restored = [c.path for c in done.changes]
        self._check_idle()
        moves = restore in ("conversation", "both")
        leaf = node.parent_id if moves else loaded.tree.leaf_id
        self.writer.append(
            RewindEntry(
                leaf_id=leaf,
                restore=_restore_kind(restore),
                entry_id=entry_id,
                files_from=files_from,
                files_to=files_to,
                files=restored,
            )
        )
        self.writer.sync()
        history = None
        if moves:
            history, _ = branch_history(loaded.tree.path(leaf), loaded.path)
        self._announce(restore, leaf, entry_id, text, restored, history)
        return RewindResult(text, restored, leaf)

    async def undo_files(self) -> RewindResult:
        """Undo the last file restore: the files as they were just before it."""
        self._check_idle()
        loaded = await self.load()
        last = next((r for r in reversed(loaded.tree.rewinds) if r.files_from), None)
        if last is None or last.files_from is None:
            raise RewindRefused("there is no file restore to undo in this session")
        store = self._store()
        done = await _checked(store.restore(last.files_from))
        restored = [c.path for c in done.changes]
        leaf = loaded.tree.leaf_id
        self.writer.append(
            RewindEntry(
                leaf_id=leaf,
                restore="undo",
                files_from=done.before,
                files_to=last.files_from,
                files=restored,
            )
        )
        self.writer.sync()
        self._announce("undo", leaf, None, "", restored, None)
        return RewindResult("", restored, leaf)

    async def move(self, entry_id: str) -> RewindResult:
        """`/tree`: go on from `entry_id`, on any branch (a user message: from just
        before it, its text back for the editor)."""
        self._check_idle()
        loaded = await self.load()
        node = _node(loaded.tree, entry_id)
        text = ""
        leaf: str | None = node.id
        if isinstance(node.entry, UserEntry):
            text = node.entry.message.content
            leaf = node.parent_id
        self.writer.append(RewindEntry(leaf_id=leaf, restore="tree", entry_id=entry_id))
        self.writer.sync()
        history, _ = branch_history(loaded.tree.path(leaf), loaded.path)
        self._announce("tree", leaf, entry_id, text, [], history)
        return RewindResult(text, [], leaf)

    async def fork(self, entry_id: str) -> Forked:
        """A new session holding this one's branch up to just before `entry_id` (a user
        message, on any branch); returns it, closed, for the caller to open."""
        loaded = await self.load()
        node = _node(loaded.tree, entry_id)
        if not isinstance(node.entry, UserEntry):
            raise RewindRefused(
                f"entry {entry_id!r} is not one of the user's messages", "not_a_message"
            )
        text = node.entry.message.content
        kept = loaded.tree.path(node.parent_id)
        workspace = self.controller.workspace
        model = self.writer.model

        def write() -> Forked:
            with SessionWriter.create(workspace, model, root=self.root) as copy:
                for kept_node in kept:
                    copy.append(kept_node.entry, entry_id=kept_node.id)
                return Forked(copy.id, copy.path, text)

        return await asyncio.to_thread(write)

    # -- parts --------------------------------------------------------------------------

    def _announce(
        self,
        restore: RewindRestore | str,
        leaf: str | None,
        entry_id: str | None,
        text: str,
        restored: list[str],
        history: list[Any] | None,
    ) -> None:
        event = Rewound(
            restore=restore,
            leaf_id=leaf,
            entry_id=entry_id,
            text=text,
            restored_files=restored,
        )
        if history is not None:
            self.controller.replace_history(history, event)
        else:
            self.controller.bus.publish(event)

    def _check_idle(self) -> None:
        if self.controller.state != "idle":
            raise RewindRefused("a run is in progress: stop it first (Esc), then rewind", "busy")

    def _store(self) -> CheckpointStore:
        if self.store is None:
            raise RewindRefused("checkpoints are off for this session: files cannot be restored")
        return self.store

    def _user_message(self, tree: SessionTree, entry_id: str) -> tuple[TreeNode, list[TreeNode]]:
        """The user message `entry_id` on the branch, and the branch after it."""
        branch = tree.branch
        for index, node in enumerate(branch):
            if node.id == entry_id:
                if not isinstance(node.entry, UserEntry):
                    raise RewindRefused(
                        f"entry {entry_id!r} is not one of the user's messages", "not_a_message"
                    )
                return node, branch[index + 1 :]
        if tree.get(entry_id) is not None:
            raise RewindRefused(
                f"entry {entry_id!r} is on another branch: move to it first (/tree)"
            )
        raise RewindRefused(f"no entry {entry_id!r} in this session", "not_found")

    async def _snapshot(self, store: CheckpointStore) -> str:
        return await _checked(store.snapshot())

    async def _snapshot_or_none(self) -> str | None:
        if self.store is None:
            return None
        try:
            return await self.store.snapshot()
        except Exception:
            return None

    async def _diff(self, a: str, b: str) -> list[FileChange]:
        assert self.store is not None
        return await _checked(self.store.diff(a, b))


async def _checked(work: Awaitable[T]) -> T:
    """The store's work, its failure (git missing, a path it will not write through)
    told as a refusal, with its reason."""
    from ink_tui.checkpoints import CheckpointError

    try:
        return await work
    except CheckpointError as error:
        raise RewindRefused(f"the files cannot be restored: {error}") from error


def _restore_kind(restore: str) -> RewindRestore:
    return "files" if restore == "files" else "both" if restore == "both" else "conversation"


def _node(tree: SessionTree, entry_id: str) -> TreeNode:
    found = tree.get(entry_id)
    if found is None:
        raise RewindRefused(f"no entry {entry_id!r} in this session", "not_found")
    return found


def _first_checkpoint(nodes: list[TreeNode]) -> str | None:
    for node in nodes:
        if isinstance(node.entry, CheckpointEntry):
            return node.entry.commit
    return None


def tree_item(node: TreeNode, on_branch: bool) -> dict[str, Any]:
    """One entry as RPC `get_tree` shows it: `{id, parent_id, role, text, ...}`."""
    item: dict[str, Any] = {
        "id": node.id,
        "parent_id": node.parent_id,
        "role": _role(node.entry),
        "text": "",
        "time": node.time.isoformat().replace("+00:00", "Z") if node.time else None,
        "on_branch": on_branch,
    }
    entry = node.entry
    match entry:
        case UserEntry(message=message):
            item["text"] = message.content
            item["kind"] = message.kind
            if message.source is not None:
                item["source"] = message.source
        case AssistantEntry(message=message):
            item["text"] = message.text[:TREE_TEXT_CHARS]
            item["truncated"] = len(message.text) > TREE_TEXT_CHARS
            item["tool_calls"] = [call.name for call in message.tool_calls]
        case ToolResultEntry(message=message):
            item["text"] = message.content[:TREE_TEXT_CHARS]
            item["truncated"] = len(message.content) > TREE_TEXT_CHARS
            item["tool_name"] = message.tool_name
            item["is_error"] = message.is_error
        case CheckpointEntry(commit=commit):
            item["commit"] = commit
        case SubagentEntry():
            item["text"] = entry.description
        case ErrorEntry(text=text):
            item["text"] = text
        case ModelChangeEntry(model=model):
            item["text"] = model
        case CompactionEntry(summary=summary):
            item["text"] = summary[:TREE_TEXT_CHARS]
    return item


def _role(entry: Entry) -> str:
    match entry:
        case UserEntry():
            return "user"
        case AssistantEntry():
            return "assistant"
        case ToolResultEntry():
            return "tool"
        case CheckpointEntry():
            return "checkpoint"
        case SubagentEntry():
            return "subagent"
        case InterruptEntry():
            return "interrupt"
        case ErrorEntry():
            return "error"
        case ModelChangeEntry():
            return "model_change"
        case CompactionEntry():
            return "compaction"
    return "other"
