"""The saved sessions of a workspace: listing them and finding one by id prefix.

A listing reads each file in full and summarises it. `-c` and `-r ID` need one session's
path before the first frame, so they read only the headers (line 1: id and start), plus
as much of the newest sessions as it takes to meet a message: reading all of a 20,000
message session only to learn it is not empty took ~0.3 s.

Lists are ordered by start; `-c` takes the session used last instead: the one whose file,
or whose `.pending.json` (input queued or typed and not yet sent), was written last. A
`/resume`d older session that was worked in is then the one `-c` continues.

A session with damaged lines is listed like any other (the reader skips the lines,
`SessionSummary.skipped_lines` says which): it must stay findable by `-c`, `-r` and the
lists. Only a file with no readable header is left out, rather than breaking the
picker, so one such file never hides the others. Sessions in which nothing was
said (the app opened and closed) are left out too: there is nothing to resume.
"""

from __future__ import annotations

import json
from pathlib import Path

from ink_tui.session.entries import AssistantEntry, SessionHeader, UserEntry, decode_entry
from ink_tui.session.session_reader import SessionFileError, load_session, read_header
from ink_tui.session.store_paths import (
    SESSION_SUFFIX,
    pending_input_path,
    session_id_from_name,
    workspace_dir,
)
from ink_tui.session.summary import SessionSummary

# How many candidates an ambiguous-prefix error lists before saying "and N more".
_MAX_LISTED = 10
_PROMPT_PREVIEW_CHARS = 50


class SessionLookupError(LookupError):
    """No session, or more than one, matches what the user asked for; `str()` says which."""


def list_sessions(
    workspace: Path | str, root: Path | None = None, *, include_empty: bool = False
) -> list[SessionSummary]:
    """The workspace's sessions, newest first."""
    folder = workspace_dir(workspace, root)
    try:
        paths = [p for p in folder.iterdir() if session_id_from_name(p.name) is not None]
    except OSError:
        # No folder yet (never used here) or unreadable: either way, nothing to offer.
        return []
    summaries = []
    for path in paths:
        summary = summarize(path)
        if summary is not None and (include_empty or summary.message_count > 0):
            summaries.append(summary)
    # The file name breaks ties: it starts with the same time, to the millisecond.
    summaries.sort(key=lambda s: (s.started, s.path.name), reverse=True)
    return summaries


def summarize(path: Path) -> SessionSummary | None:
    """One session's row in the list, or None when the file cannot be read."""
    try:
        loaded = load_session(path)
    except (SessionFileError, OSError):
        return None
    return SessionSummary(
        id=loaded.header.id,
        path=path,
        started=loaded.header.started,
        first_prompt=loaded.first_prompt,
        message_count=loaded.message_count,
        model=loaded.model,
        skipped_lines=tuple(loaded.skipped_lines),
    )


def newest_session(workspace: Path | str, root: Path | None = None) -> SessionSummary | None:
    """The session `--continue` resumes (the one used last), or None when there is none."""
    path = newest_session_path(workspace, root)
    return summarize(path) if path is not None else None


def newest_session_path(workspace: Path | str, root: Path | None = None) -> Path | None:
    """The file of `newest_session`, found without reading any session in full: the
    session used last (`last_used`) in which something was said or input is pending."""
    used = [
        (last_used(path), header.started, path.name, path)
        for header, path in _headers(workspace, root)
    ]
    used.sort(key=lambda item: item[:3], reverse=True)
    for *_, path in used:
        if _has_message(path) or pending_input_path(path).exists():
            return path
    return None


def last_used(path: Path) -> int:
    """When the session was last used, in ns since the epoch: the latest write of its file
    or of its pending input (which is written alone when input is only queued or typed);
    0 when neither can be looked at."""
    times = []
    for written in (path, pending_input_path(path)):
        try:
            times.append(written.stat().st_mtime_ns)
        except OSError:
            continue
    return max(times, default=0)


def find_session(workspace: Path | str, id_prefix: str, root: Path | None = None) -> SessionSummary:
    """The one session whose id starts with `id_prefix`. Raises `SessionLookupError`."""
    path = find_session_path(workspace, id_prefix, root)
    summary = summarize(path)
    if summary is None:
        # Its header read a moment ago; the rest of it did not (or it is gone now).
        raise SessionLookupError(f"session {id_prefix.strip()!r} can no longer be read: {path}")
    return summary


def find_session_path(workspace: Path | str, id_prefix: str, root: Path | None = None) -> Path:
    """The file of `find_session`, found from the headers. Raises `SessionLookupError`."""
    prefix = id_prefix.strip().lower()
    if prefix.endswith(SESSION_SUFFIX):
        prefix = prefix[: -len(SESSION_SUFFIX)]
    if not prefix:
        raise SessionLookupError("give the start of a session id (see /sessions)")
    # Empty sessions count: the user may hold an id from an earlier listing of them.
    sessions = _headers(workspace, root)
    matches = [path for header, path in sessions if header.id.lower().startswith(prefix)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        saved = f"{len(sessions)} saved" if sessions else "none saved yet"
        raise SessionLookupError(
            f"no session id starts with {id_prefix.strip()!r} in this workspace ({saved})"
        )
    # Only the candidates listed are read in full, for their first prompt.
    listed_summaries = [summarize(path) for path in matches[:_MAX_LISTED]]
    listed = "\n".join(f"  {_describe(s)}" for s in listed_summaries if s is not None)
    more = len(matches) - _MAX_LISTED
    if more > 0:
        listed += f"\n  … and {more} more"
    raise SessionLookupError(
        f"{id_prefix.strip()!r} matches {len(matches)} sessions; give more of the id:\n{listed}"
    )


def _headers(workspace: Path | str, root: Path | None) -> list[tuple[SessionHeader, Path]]:
    """Every session whose header reads, newest first (as `list_sessions` orders them)."""
    folder = workspace_dir(workspace, root)
    try:
        paths = [p for p in folder.iterdir() if session_id_from_name(p.name) is not None]
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            found.append((read_header(path), path))
        except (SessionFileError, OSError):
            continue  # `summarize` leaves such a file out too
    found.sort(key=lambda item: (item[0].started, item[1].name), reverse=True)
    return found


def _has_message(path: Path) -> bool:
    """Whether the session holds a user or assistant message (`message_count > 0`),
    skipping the lines the full reader skips; reads only up to the first message."""
    try:
        with open(path, "rb") as file:
            file.readline()  # the header, already read
            for raw in file:
                if not raw.strip():
                    continue
                try:
                    entry = decode_entry(json.loads(raw.decode("utf-8")))
                except ValueError:
                    # Not UTF-8, not JSON, not an entry (`EntryError` is a ValueError), or
                    # a torn last line: the full reader skips each of these too.
                    continue
                if isinstance(entry, (UserEntry, AssistantEntry)):
                    return True
    except OSError:
        return False
    return False


def _describe(summary: SessionSummary) -> str:
    when = summary.started.astimezone().strftime("%Y-%m-%d %H:%M")
    prompt = " ".join(summary.first_prompt.split())
    if len(prompt) > _PROMPT_PREVIEW_CHARS:
        prompt = prompt[: _PROMPT_PREVIEW_CHARS - 1] + "…"
    return f"{summary.id}  {when}  {prompt or '(no prompt)'}"
