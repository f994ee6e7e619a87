"""Reading a session file back: its header, its entries, and the model's history.

What can go wrong, and what happens (the format is in `session_writer`):

- The last line was cut off (no trailing newline and not valid JSON: the app was killed
  while writing it): skipped, with a warning. Nothing after it was lost.
- A line after the header is damaged (not UTF-8, not JSON, or a known entry with wrong
  fields): skipped, and reading goes on past it, with one warning naming the file and
  the skipped line numbers (`LoadedSession.skipped_lines`). One bad line (a disk error,
  a stray edit) must not cost the whole conversation, nor hide the session from `-c`,
  `-r` and the lists; the warning tells the user what is missing and where the file is,
  so they can look. Tool results whose call was on a skipped line are left out of the
  history (a provider rejects a result without its call); calls whose result was on a
  skipped line get an error result, as below.
- The header (line 1) is wrong or missing: `SessionFileError` naming the file, the line
  and what is wrong. Without it there is no id or start time to resume the session by.
- An entry type this version does not know: skipped, with a warning.
- Tool calls without results (killed mid-tool): error results are added to the history
  so it is valid for the next model call, with a warning.
- Bare `NaN`, `Infinity` or `-Infinity` (written before the writer was strict): read as
  the strings `"NaN"`, `"Infinity"`, `"-Infinity"`, as the writer now writes them; the
  session opens and nothing non-finite enters the history.

A compacted session: the history is the last compaction's summary followed by the
messages from its `end` on (counted in the repaired list of every message, as the live
session counted them); the entries keep everything, for the transcript.

A sub-agent's conversation is one `subagent` entry (`LoadedSession.subagents`), never
in the history: a damaged one is skipped like any damaged line.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from ink_tui.core.compaction_prompt import summary_message
from ink_tui.core.messages import AssistantMessage, Message
from ink_tui.session.entries import (
    AssistantEntry,
    CompactionEntry,
    Entry,
    EntryError,
    ModelChangeEntry,
    SessionHeader,
    SubagentEntry,
    ToolResultEntry,
    UnknownEntryType,
    UserEntry,
    decode_entry,
    decode_header,
)
from ink_tui.session.history_repair import complete_tool_results, drop_orphan_results
from ink_tui.session.session_tree import ReadLine, SessionTree, TreeNode, build_tree

T = TypeVar("T")


class SessionFileError(Exception):
    """A session file that cannot be read; `str()` is the message for the user."""

    def __init__(self, path: Path, reason: str, line: int | None = None) -> None:
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


@dataclass(slots=True)
class LoadedSession:
    path: Path
    header: SessionHeader
    # The entries of the current branch (see `session_tree`), in order: what the model
    # and the transcript had (skipped lines left out).
    entries: list[Entry]
    # The conversation as the model had it, ready for `RunController(history=...)`.
    history: list[Message]
    warnings: list[str] = field(default_factory=list)
    # 1-based numbers of the damaged lines that were skipped (a torn last line is not one).
    skipped_lines: list[int] = field(default_factory=list)
    # Every entry of the file as a tree (every branch), with ids and times.
    tree: SessionTree = field(default_factory=SessionTree)

    @property
    def leaf_id(self) -> str | None:
        """The entry the next one hangs from (None: the session has none yet)."""
        return self.tree.leaf_id

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def model(self) -> str:
        """The model in use when the session ended: the header's or the last change."""
        everything = [node.entry for node in self.tree.nodes] or self.entries
        changes = [e.model for e in everything if isinstance(e, ModelChangeEntry)]
        return changes[-1] if changes else self.header.model

    @property
    def first_prompt(self) -> str:
        for entry in self.entries:
            if isinstance(entry, UserEntry):
                return entry.message.content
        return ""

    @property
    def replies(self) -> list[AssistantMessage]:
        """Every reply the file recorded, with its usage (compacted ones too): what the
        session's tokens and cost add up from, every branch's."""
        everything = [node.entry for node in self.tree.nodes] or self.entries
        return [e.message for e in everything if isinstance(e, AssistantEntry)]

    @property
    def subagents(self) -> list[SubagentEntry]:
        """Each sub-agent's recorded conversation (a `task` call's), in the order they
        ended: not part of `history`, which has the calls and their results."""
        return [e for e in self.entries if isinstance(e, SubagentEntry)]

    @property
    def message_count(self) -> int:
        """User and assistant messages (tool results are not counted)."""
        return sum(isinstance(e, (UserEntry, AssistantEntry)) for e in self.entries)


def load_session(path: Path) -> LoadedSession:
    """Read a whole session. Raises `SessionFileError` (never a bare parse error).

    The file is read a line at a time: only the parsed entries stay, never the file's
    bytes as well (a 50 MB session held both for a while, and the heap kept the room).
    """
    path = Path(path)
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed below, read in a loop
    except OSError as error:
        raise SessionFileError(path, f"cannot be read ({error.strerror or error})") from None
    with file:
        try:
            return _read_open(path, file)
        except OSError as error:
            raise SessionFileError(path, f"cannot be read ({error.strerror or error})") from None


def _read_open(path: Path, file: BinaryIO) -> LoadedSession:
    header_line = file.readline()
    warnings: list[str] = []
    if not header_line.endswith(b"\n"):
        # The whole file is one line the writer did not finish (or nothing at all).
        if not header_line.strip():
            raise SessionFileError(path, "the file is empty: it has no session header")
        if not _parses(header_line):
            raise SessionFileError(path, "the session header was cut off", line=1)
    elif not header_line.strip() and not _has_content(file):
        raise SessionFileError(path, "the file is empty: it has no session header")

    header = _decode_line(path, 1, header_line, decode_header)
    del header_line
    lines: list[ReadLine] = []
    damaged: list[SessionFileError] = []
    for number, raw in enumerate(file, start=2):
        if not raw.strip():
            continue
        if not raw.endswith(b"\n") and not _parses(raw):
            # A last line the writer did not finish (the app was killed while writing
            # it): nothing after it was lost.
            warnings.append(
                f"the last line of {path} was cut off (the app was probably killed while "
                "writing); skipped it"
            )
            break
        try:
            lines.append(_decode_line(path, number, raw, partial(_read_line, number)))
        except _UnknownType as unknown:
            warnings.append(f"{path}, line {number}: {unknown.reason}; skipped it")
        except SessionFileError as error:
            damaged.append(error)
    if damaged:
        warnings.insert(0, _damage_warning(path, damaged))
    tree = build_tree(lines)
    del lines
    entries = [node.entry for node in tree.branch]
    history, history_warnings = branch_history(tree.branch, path, damaged=bool(damaged))
    warnings.extend(history_warnings)
    skipped = [error.line for error in damaged if error.line is not None]
    return LoadedSession(path, header, entries, history, warnings, skipped, tree)


def branch_history(
    branch: list[TreeNode], path: Path, *, damaged: bool = False
) -> tuple[list[Message], list[str]]:
    """The history as the model has it on `branch` (root to leaf), and what had to be
    repaired in it, as warnings naming `path`."""
    entries = [node.entry for node in branch]
    for node in branch:
        if isinstance(node.entry, UserEntry):
            node.entry.message.entry_id = node.id
    warnings: list[str] = []
    history = _history_of(entries)
    # Only a skipped line can part a result from its call: the writer records the call
    # first. Without damage the history is left exactly as it was written.
    dropped = 0
    if damaged:
        history, dropped = drop_orphan_results(history)
    if dropped:
        results = "result" if dropped == 1 else "results"
        warnings.append(
            f"{dropped} tool {results} in {path} lost their call to a damaged line; "
            "left them out of the conversation sent to the model"
        )
    history, added = complete_tool_results(history)
    if added:
        calls = "call has" if added == 1 else "calls have"
        why = (
            "lost to a damaged line, or the session ended before they finished"
            if damaged
            else "the session ended before they finished"
        )
        warnings.append(
            f"{added} tool {calls} no result in {path} ({why}); added error results so "
            "the conversation can continue"
        )
    return _compacted(entries, history), warnings


def _compacted(entries: list[Entry], history: list[Message]) -> list[Message]:
    """The history as the model had it after the last compaction, if there was one."""
    messages_before = 0
    last: CompactionEntry | None = None
    kept = 0
    for entry in entries:
        if isinstance(entry, (UserEntry, AssistantEntry, ToolResultEntry)):
            messages_before += 1
        elif isinstance(entry, CompactionEntry):
            last = entry
            kept = max(0, messages_before - entry.end)
    if last is None:
        return history
    # A damaged file may hold fewer messages than the summary says it stands for.
    end = min(last.end, len(history))
    return [summary_message(last.summary, end, kept), *history[end:]]


# How many skipped line numbers a warning lists before "…".
_MAX_LINES_LISTED = 10


def _damage_warning(path: Path, damaged: list[SessionFileError]) -> str:
    """One warning for every damaged line: which, why (the first), and that reading went on."""
    first = damaged[0]
    if len(damaged) == 1:
        return (
            f"line {first.line} of {path} is damaged ({first.reason}); skipped it and read "
            "the rest of the session"
        )
    numbers = ", ".join(str(error.line) for error in damaged[:_MAX_LINES_LISTED])
    if len(damaged) > _MAX_LINES_LISTED:
        numbers += ", …"
    return (
        f"{len(damaged)} damaged lines of {path} were skipped (lines {numbers}; line "
        f"{first.line}: {first.reason}); the rest of the session was read"
    )


def _read_line(number: int, obj: Any) -> ReadLine:
    """An entry line with its place in the tree (`id`, `parent_id`, `ts`), which lines
    from before the tree do not have."""
    entry = decode_entry(obj)
    entry_id = obj.get("id")
    parent = obj.get("parent_id")
    return ReadLine(
        number=number,
        entry=entry,
        id=entry_id if isinstance(entry_id, str) and entry_id else None,
        parent_id=parent if isinstance(parent, str) else None,
        has_parent="parent_id" in obj and (parent is None or isinstance(parent, str)),
        time=_time_of(obj.get("ts")),
    )


def _time_of(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def read_header(path: Path) -> SessionHeader:
    """Only the header (line 1). Raises `SessionFileError`."""
    path = Path(path)
    try:
        with open(path, "rb") as file:
            first = file.readline()
    except OSError as error:
        raise SessionFileError(path, f"cannot be read ({error.strerror or error})") from None
    if not first.strip():
        raise SessionFileError(path, "the file is empty: it has no session header")
    if not first.endswith(b"\n") and not _parses(first):
        raise SessionFileError(path, "the session header was cut off", line=1)
    return _decode_line(path, 1, first, decode_header)


def _history_of(entries: list[Entry]) -> list[Message]:
    history: list[Message] = []
    for entry in entries:
        if isinstance(entry, (UserEntry, AssistantEntry, ToolResultEntry)):
            history.append(entry.message)
    return history


class _UnknownType(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _decode_line(path: Path, number: int, raw: bytes, decode: Callable[[Any], T]) -> T:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        reason = f"not valid UTF-8 (byte {error.start + 1})"
        raise SessionFileError(path, reason, line=number) from None
    try:
        # A file from before the writer was strict may hold bare NaN/Infinity (a model's
        # tool arguments): read as the strings the writer now writes, so the session
        # opens, and reopened it is what programs were shown.
        obj = json.loads(text, parse_constant=str)
    except json.JSONDecodeError as error:
        reason = f"not valid JSON ({error.msg} at column {error.colno})"
        raise SessionFileError(path, reason, line=number) from None
    try:
        return decode(obj)
    except UnknownEntryType as error:
        raise _UnknownType(str(error)) from None
    except EntryError as error:
        raise SessionFileError(path, str(error), line=number) from None


def _has_content(file: BinaryIO) -> bool:
    """Whether anything but blank lines follows (the file's position moves; seek back)."""
    start = file.tell()
    found = any(line.strip() for line in file)
    file.seek(start)
    return found


def _parses(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True
