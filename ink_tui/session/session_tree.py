"""A session as a tree: each entry names its parent, and the leaf is where it goes on.

Every line of a session file but the header and `rewind` lines is a node: it has an
`id` and a `parent_id` (None for a first entry), and the next entry hangs from the
leaf, which is the last node written, unless a `rewind` line moved it since (to an
earlier node, or to None: before the first). The branch is the path from the root to
the leaf: the conversation the model has. The other branches stay in the file.

Files written before the tree (no ids) read as one branch: each line's id is `L<line
number>` and its parent the node before it. A parent that is not in the file (its line
was damaged and skipped) is taken to be the node before, as in an old file, so one bad
line never cuts a conversation in two.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field

from ink_tui.session.entries import Entry, RewindEntry, UserEntry


@dataclass(slots=True)
class TreeNode:
    id: str
    parent_id: str | None
    entry: Entry
    # When it was written; None in files from before the tree.
    time: dt.datetime | None = None


@dataclass(slots=True)
class SessionTree:
    nodes: list[TreeNode] = field(default_factory=list)
    leaf_id: str | None = None
    # The `rewind` lines, in file order (the last file restore is what an undo reverts).
    rewinds: list[RewindEntry] = field(default_factory=list)
    _by_id: dict[str, TreeNode] = field(default_factory=dict)
    _children: dict[str | None, list[TreeNode]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for node in self.nodes:
            self._index(node)

    def _index(self, node: TreeNode) -> None:
        self._by_id[node.id] = node
        self._children.setdefault(node.parent_id, []).append(node)

    def add(self, node: TreeNode) -> None:
        self.nodes.append(node)
        self._index(node)
        self.leaf_id = node.id

    def get(self, entry_id: str) -> TreeNode | None:
        return self._by_id.get(entry_id)

    def node(self, entry_id: str) -> TreeNode:
        """The node with `entry_id`; `LookupError` saying so when there is none."""
        found = self._by_id.get(entry_id)
        if found is None:
            raise LookupError(f"no entry {entry_id!r} in this session")
        return found

    def children(self, entry_id: str | None) -> list[TreeNode]:
        return list(self._children.get(entry_id, ()))

    def path(self, leaf_id: str | None) -> list[TreeNode]:
        """The nodes from the root down to `leaf_id` (included); [] for None."""
        path: list[TreeNode] = []
        seen: set[str] = set()
        current = self._by_id.get(leaf_id) if leaf_id is not None else None
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            parent = current.parent_id
            current = self._by_id.get(parent) if parent is not None else None
        path.reverse()
        return path

    @property
    def branch(self) -> list[TreeNode]:
        """The current conversation: root to leaf."""
        return self.path(self.leaf_id)

    def user_messages(self, leaf_id: str | None = None) -> Iterator[TreeNode]:
        """The user's messages on the branch ending at `leaf_id` (default: the leaf)."""
        for node in self.path(self.leaf_id if leaf_id is None else leaf_id):
            if isinstance(node.entry, UserEntry):
                yield node

    def is_on_branch(self, entry_id: str) -> bool:
        return any(node.id == entry_id for node in self.branch)

    @property
    def tips(self) -> list[TreeNode]:
        """Every node nothing hangs from: the end of each branch, in file order."""
        return [node for node in self.nodes if not self._children.get(node.id)]


@dataclass(slots=True)
class ReadLine:
    """One entry line as `session_reader` read it, before the tree is built."""

    number: int
    entry: Entry
    # None: the line has no id (written before the tree).
    id: str | None = None
    parent_id: str | None = None
    # False: the line has no `parent_id` at all (before the tree): the node before it.
    has_parent: bool = False
    time: dt.datetime | None = None


def build_tree(lines: list[ReadLine]) -> SessionTree:
    """The tree of a file's entry lines, in file order."""
    tree = SessionTree()
    previous: str | None = None
    for line in lines:
        entry = line.entry
        if isinstance(entry, RewindEntry):
            tree.rewinds.append(entry)
            target = entry.leaf_id
            # A move to a node lost to damage: stay where the file was.
            tree.leaf_id = target if target is None or tree.get(target) else previous
            previous = tree.leaf_id
            continue
        node_id = line.id if line.id is not None and tree.get(line.id) is None else None
        if node_id is None:
            node_id = f"L{line.number}"
        parent = line.parent_id
        if not line.has_parent or (parent is not None and tree.get(parent) is None):
            parent = previous
        tree.add(TreeNode(node_id, parent, entry, line.time))
        previous = node_id
    return tree
