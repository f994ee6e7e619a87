"""The demo's changes: a write, an edit and a plain command, each asked about first.

After looking around (ls, reads, grep) the tour makes changes of its own, so the approval
questions show what they can: a `write` of a new file and an `edit` of it, each with its
diff, and a plain command (`ls -la`: a program and its arguments, no `;`, `|` or `$`),
whose question also offers "allow for this session" and "always". The slow command that
counts the files comes after them (`demo_replies.bash_reply`).

The demo only writes a file of its own, inside the workspace: `ink-demo-notes.md`, or
`ink-demo-notes-2.md` … when the listing shows that name taken. With no listing, or one
cut short (a name might be hidden), it writes nothing and goes on to the command.
Pure functions: the plan (`demo_script`) passes the calls and results so far.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ink_tui.core.messages import ToolCall, ToolResultMessage
from ink_tui.providers.demo_findings import Findings
from ink_tui.providers.demo_replies import DemoReply, PlannedCall, worded

__all__ = ["NOTES_STEM", "PLAIN_COMMAND", "change_step", "notes_content", "notes_path"]

NOTES_STEM = "ink-demo-notes"
PLAIN_COMMAND = "ls -la"
TITLE = "# Notes from ink's demo"
EDITED_TITLE = "# Notes from ink's demo (edited)"
STATUS = "Status: draft"
EDITED_STATUS = "Status: edited by the demo"

_ANSWER = "press **Ctrl+G** (or click a choice), then a key"


def notes_path(found: Findings) -> str | None:
    """A name for the demo's notes that no entry of the listing has, or None when the
    listing is missing or cut short (a user's file of that name might be hidden)."""
    if found.entries is None or found.listing_cut:
        return None
    taken = {entry.lower() for entry in found.entries}
    for number in range(1, 10):
        name = f"{NOTES_STEM}.md" if number == 1 else f"{NOTES_STEM}-{number}.md"
        if name not in taken:
            return name
    return None


def notes_content(found: Findings) -> str:
    """What the notes say: what the tour has seen so far."""
    seen: list[str] = []
    if found.entries is not None:
        count = len(found.entries)
        seen.append(f"- {count} {'entry' if count == 1 else 'entries'} in the workspace")
    seen.extend(f"- read `{path}` ({shown} lines shown)" for path, shown, _ in found.reads)
    if found.search is not None:
        pattern, hits = found.search
        seen.append(f"- {hits} {'match' if hits == 1 else 'matches'} for `{pattern}`")
    if found.test_files is not None:
        count = found.test_files
        seen.append(f"- {count} test {'file' if count == 1 else 'files'}, counted by a sub-agent")
    return "\n".join(
        [
            TITLE,
            "Written by ink's offline demo model, to show a write and an edit; delete it",
            "whenever you like.",
            "",
            *(seen or ["- nothing seen yet"]),
            "",
            STATUS,
            "",
        ]
    )


def change_step(
    calls: Sequence[ToolCall], results: Mapping[str, ToolResultMessage], found: Findings
) -> DemoReply | None:
    """The next change to show (write, edit, plain command), or None when all are done."""
    writes = [call for call in calls if call.name == "write"]
    commands = [call for call in calls if call.name == "bash"]
    if not writes and not commands and (path := notes_path(found)) is not None:
        return _write_reply(found, path)
    if writes and not any(call.name == "edit" for call in calls) and not commands:
        result = results.get(writes[0].id)
        if result is not None and not result.is_error:
            return _edit_reply(str(writes[0].arguments["path"]))
    if not commands:
        return _plain_command_reply()
    return None


def _write_reply(found: Findings, path: str) -> DemoReply:
    text = ""
    # Said already when a sub-agent's task came between the search and this write.
    if found.search is not None and not found.delegated:
        pattern, hits = found.search
        text = f"Found {hits} {'match' if hits == 1 else 'matches'} for `{pattern}`.\n\n"
    text += (
        f"Now a change: I'll **write** my notes to a new file, `{path}` (a name of my own, "
        "so none of your files is touched). ink asks before anything is written (approval "
        "policy `ask`), and the question shows the diff. To answer, "
        + worded(
            f"{_ANSWER}: **y** allows it once, **s** allows every write this session, "
            "**n** denies it. Typing meanwhile never answers: it goes to the input.",
            "click **Allow once**, **Allow for this session** (every write this session) "
            "or **Deny**. Typing meanwhile never answers: it goes to the text box.",
        )
    )
    call = PlannedCall("write", {"path": path, "content": notes_content(found)})
    return DemoReply(text, "Show a write: notes of my own, in a new file.", [call])


def _edit_reply(path: str) -> DemoReply:
    text = (
        f"Next an **edit** of `{path}`: two small changes, the title and the status line. "
        "The question shows just what changes. Once it has run, the call's folded diff "
        "shows the changed lines; click it"
        + worded(" (or press **Ctrl+O**)", "")
        + " to see it all."
    )
    edits = [
        {"old_text": TITLE + "\n", "new_text": EDITED_TITLE + "\n"},
        {"old_text": STATUS + "\n", "new_text": EDITED_STATUS + "\n"},
    ]
    call = PlannedCall("edit", {"path": path, "edits": edits})
    return DemoReply(text, "Show an edit of the notes, with its diff.", [call])


def _plain_command_reply() -> DemoReply:
    text = (
        f"Now a plain command, `{PLAIN_COMMAND}`: just a program and its arguments (no `;`, "
        "`|` or `$`), so besides "
        + worded(
            "**y** (once) its question offers **s**, allow `ls` commands for the rest of "
            "this session, and **a**, always",
            "**Allow once** its question offers **Allow for this session** (`ls` commands "
            "for the rest of this session) and **Always**",
        )
        + ": a rule saved in this "
        "folder's `.ink/config.toml`. A long output folds to its last lines; click it to "
        "see them all."
    )
    call = PlannedCall("bash", {"command": PLAIN_COMMAND})
    return DemoReply(text, "Show a plain command, which can be allowed for good.", [call])
