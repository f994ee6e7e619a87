"""The saved sessions of a workspace: listing them and finding one by id prefix.

Each file is read in full (sessions are small next to what a model can take in) and
summarised. A session with damaged lines is listed like any other (the reader skips the
lines, `SessionSummary.skipped_lines` says which): it must stay findable by `-c`, `-r`
and the lists. Only a file with no readable header is left out, rather than breaking
the picker, so one such file never hides the others. Sessions in which nothing was
said (the app opened and closed) are left out too: there is nothing to resume.
"""

from __future__ import annotations

from pathlib import Path

from ink_tui.session.session_reader import SessionFileError, load_session
from ink_tui.session.store_paths import SESSION_SUFFIX, session_id_from_name, workspace_dir
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
    """The session `--continue` resumes, or None when the workspace has none."""
    sessions = list_sessions(workspace, root)
    return sessions[0] if sessions else None


def find_session(workspace: Path | str, id_prefix: str, root: Path | None = None) -> SessionSummary:
    """The one session whose id starts with `id_prefix`. Raises `SessionLookupError`."""
    prefix = id_prefix.strip().lower()
    if prefix.endswith(SESSION_SUFFIX):
        prefix = prefix[: -len(SESSION_SUFFIX)]
    if not prefix:
        raise SessionLookupError("give the start of a session id (see /sessions)")
    # Empty sessions count: the user may hold an id from an earlier listing of them.
    sessions = list_sessions(workspace, root, include_empty=True)
    matches = [s for s in sessions if s.id.lower().startswith(prefix)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        saved = f"{len(sessions)} saved" if sessions else "none saved yet"
        raise SessionLookupError(
            f"no session id starts with {id_prefix.strip()!r} in this workspace ({saved})"
        )
    listed = "\n".join(f"  {_describe(s)}" for s in matches[:_MAX_LISTED])
    more = len(matches) - _MAX_LISTED
    if more > 0:
        listed += f"\n  … and {more} more"
    raise SessionLookupError(
        f"{id_prefix.strip()!r} matches {len(matches)} sessions; give more of the id:\n{listed}"
    )


def _describe(summary: SessionSummary) -> str:
    when = summary.started.astimezone().strftime("%Y-%m-%d %H:%M")
    prompt = " ".join(summary.first_prompt.split())
    if len(prompt) > _PROMPT_PREVIEW_CHARS:
        prompt = prompt[: _PROMPT_PREVIEW_CHARS - 1] + "…"
    return f"{summary.id}  {when}  {prompt or '(no prompt)'}"
