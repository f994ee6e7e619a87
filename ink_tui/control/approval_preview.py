"""The diff an approval question shows for a write or edit, computed before it runs.

Blocking (reads the file): call it on a worker thread. Never raises: a change that
cannot be previewed (the edit does not apply, a binary or huge file) gets a note instead,
and the question is asked all the same.
"""

from __future__ import annotations

from pathlib import Path

from ink_tui.core.messages import ToolCall
from ink_tui.core.tool_api import ToolError
from ink_tui.tools.binary import decode_text
from ink_tui.tools.diff import unified_diff
from ink_tui.tools.edit import apply_edits
from ink_tui.tools.path_target import path_target

# Files larger than this are not read for a preview.
MAX_PREVIEW_SOURCE = 2 * 1024 * 1024


def preview(workspace: Path, call: ToolCall) -> tuple[str | None, str, str]:
    """(the path as shown, a unified diff or "", a note when there is no diff).

    The path is the file the tool will open (`path_target`: symlinks followed), which
    is what the gate judged and the question names."""
    raw = call.arguments.get("path")
    if not isinstance(raw, str):
        return None, "", ""
    target = path_target(workspace, raw)
    path, shown = target.real, target.shown
    try:
        old = _old_text(path)
    except (OSError, ValueError) as error:
        return shown, "", f"cannot read the file for a preview: {error}"
    if call.name == "write":
        content = call.arguments.get("content")
        if not isinstance(content, str):
            return shown, "", ""
        if old is None:
            note = "new file" if not path.exists() else "not a text file we can diff"
            if not path.exists():
                return shown, unified_diff("", content, shown), note
            return shown, "", note
        if old == content:
            return shown, "", "the content is unchanged"
        return shown, unified_diff(old, content, shown), ""
    edits = call.arguments.get("edits")
    if old is None or not isinstance(edits, list):
        return shown, "", "the file cannot be read as text"
    try:
        updated = apply_edits(old, edits, shown)
    except ToolError as error:
        # The edit will fail when it runs; the question still says what it wanted.
        return shown, "", f"these edits do not apply as they are: {error}"
    except (KeyError, TypeError):
        return shown, "", ""
    return shown, unified_diff(old, updated, shown), ""


def _old_text(path: Path) -> str | None:
    """The file's text; None when it does not exist, is binary or too large."""
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_PREVIEW_SOURCE:
        return None
    return decode_text(path.read_bytes())
