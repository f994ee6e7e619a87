"""Which saved session `-c` and `-r ID` mean, for every front end (app and print mode).

- `-c`: the workspace's session used last (its file or its pending input written last) in
  which something was said or input waits; when there is none,
  a new session, with a note saying so (not an error: "carry on if there is anything to
  carry on" is what a script running `ink -c -p` every time wants).
- `-r ID`: the one session whose id starts with ID; none or several is an error
  (`SessionLookupError`, whose message lists the candidates).
- `-r` without an id means "let me pick", which only a front end with a picker can do;
  callers handle it before asking here.
- Both `-c` and `-r`: `-c` wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ink_tui.session.catalog import SessionLookupError, find_session_path, newest_session_path

__all__ = ["NO_EARLIER_SESSION", "SessionChoice", "SessionLookupError", "choose_session"]

NO_EARLIER_SESSION = "No earlier session in this workspace; this is a new one."


@dataclass(frozen=True, slots=True)
class SessionChoice:
    # The session to resume, or None for a new one.
    path: Path | None
    # Something to tell the user about the choice.
    note: str | None = None


def choose_session(
    workspace: Path, *, continue_: bool, resume: str | None, root: Path | None = None
) -> SessionChoice:
    """The session the flags name. Raises `SessionLookupError` for a bad `-r ID`."""
    if continue_:
        newest = newest_session_path(workspace, root)
        if newest is None:
            return SessionChoice(None, NO_EARLIER_SESSION)
        return SessionChoice(newest)
    if resume:
        # Only the headers are read: the caller reads the chosen session once, in full.
        return SessionChoice(find_session_path(workspace, resume, root))
    return SessionChoice(None)
