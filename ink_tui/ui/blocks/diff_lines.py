"""A unified diff as coloured lines: additions green, removals red, hunk headers cyan."""

from __future__ import annotations

from rich.text import Text

ADDED = "green"
REMOVED = "red"
HUNK = "cyan"
FILE_HEADER = "bold"


def diff_line_style(line: str) -> str:
    # File headers first: "---"/"+++" would otherwise read as a removal/addition.
    if line.startswith(("--- ", "+++ ")):
        return FILE_HEADER
    if line.startswith("@@"):
        return HUNK
    if line.startswith("+"):
        return ADDED
    if line.startswith("-"):
        return REMOVED
    return ""


def diff_lines(diff: str, file_header: bool = True) -> list[Text]:
    """One styled `Text` per line; plain text, so brackets in code are never markup.

    `file_header=False` drops the leading `---`/`+++` lines, for a view that already
    names the file.
    """
    lines = diff.splitlines()
    if not file_header:
        while lines and lines[0].startswith(("--- ", "+++ ")):
            lines.pop(0)
    return [Text(line, style=diff_line_style(line)) for line in lines]
