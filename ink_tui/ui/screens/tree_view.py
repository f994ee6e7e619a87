"""/tree: the session's branches, to move between them.

One row per user message and per branch tip (the last entry of a branch, often an
answer), plus the entry the conversation goes on from now when it is neither. Rows are
in file order, depth first; a branch is indented one step more than the entry it splits
from, so a session never rewound reads as one flat list. "●" marks the rows of the
current branch, "○" the others; the row the conversation goes on from says "here".
Enter (or a click) picks a row; the result is its entry id, or None when cancelled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ink_tui.session.entries import UserEntry
from ink_tui.session.rewind import tree_item
from ink_tui.session.session_tree import SessionTree, TreeNode
from ink_tui.ui.screens.list_picker import ListPicker, PickerRow
from ink_tui.ui.screens.rewind_picker import shown_time
from ink_tui.ui.screens.session_picker import first_line

INDENT = "  "
# Deep trees are rare; past this the indent stops growing so the text stays in view.
MAX_DEPTH = 8
TEXT_WIDTH = 80
ROLE_NAMES = {"assistant": "answer", "tool": "tool result", "interrupt": "interrupted"}


@dataclass(frozen=True, slots=True)
class TreeRow:
    entry_id: str
    depth: int
    text: str
    time: str | None
    on_branch: bool
    # The conversation goes on from this entry (the leaf).
    here: bool
    is_user: bool


def tree_rows(tree: SessionTree) -> list[TreeRow]:
    """The rows to show, depth first in file order (an explicit stack: a long session
    is a deep tree, too deep for recursion)."""
    on_branch = {node.id for node in tree.branch}
    rows: list[TreeRow] = []
    roots = tree.children(None)
    stack: list[tuple[TreeNode, int]] = [
        (node, 1 if len(roots) > 1 else 0) for node in reversed(roots)
    ]
    while stack:
        node, depth = stack.pop()
        children = tree.children(node.id)
        is_user = isinstance(node.entry, UserEntry)
        here = node.id == tree.leaf_id
        if is_user or not children or here:
            rows.append(_row(node, depth, node.id in on_branch, here))
        step = 1 if len(children) > 1 else 0
        stack.extend((child, depth + step) for child in reversed(children))
    return rows


def _row(node: TreeNode, depth: int, on_branch: bool, here: bool) -> TreeRow:
    item = tree_item(node, on_branch)
    is_user = item["role"] == "user"
    raw = str(item.get("text") or "")
    text = first_line(raw if is_user else plain_markdown(raw), TEXT_WIDTH)
    if not is_user:
        role = str(item["role"])
        text = f"↳ {ROLE_NAMES.get(role, role)}: {text}"
    return TreeRow(node.id, depth, text, item["time"], on_branch, here, is_user)


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"(\*\*|__|`+|~~)")
_LINE_MARKS = re.compile(r"^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)")


def plain_markdown(text: str) -> str:
    """An answer's markdown as the words it shows, for a one-line excerpt: no heading,
    list or quote marks, no emphasis or code ticks, a link's text without its address
    (the user's own text is shown as typed)."""
    lines = [_LINE_MARKS.sub("", line) for line in text.splitlines()]
    return _MARKS.sub("", _LINK.sub(r"\1", "\n".join(lines)))


def picker_row(row: TreeRow) -> PickerRow:
    mark = "●" if row.on_branch else "○"
    label = f"{INDENT * min(row.depth, MAX_DEPTH)}{mark} {row.text}"
    when = shown_time(row.time)
    detail = f"here · {when}" if row.here and when else "here" if row.here else when
    return (row.entry_id, label, detail)


class TreeView(ListPicker):
    """Pick an entry of any branch to go on from; the result is its id, or None."""

    def __init__(self, tree: SessionTree) -> None:
        rows = tree_rows(tree)
        here = next((row.entry_id for row in rows if row.here), None)
        if here is None:
            here = next((row.entry_id for row in reversed(rows) if row.on_branch), None)
        super().__init__(
            "Session tree: ● the current branch",
            [picker_row(row) for row in rows],
            here,
            placeholder="Type to filter; Enter goes on from there",
        )
