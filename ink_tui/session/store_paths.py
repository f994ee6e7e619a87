"""Where the session store lives on disk, and how its files are named.

    <user_data_dir("ink")>/sessions/<workspace-folder>/
        2024-05-01T10-15-30-123Z_3f9c2a7be01d.jsonl          a session (see session_writer)
        2024-05-01T10-15-30-123Z_3f9c2a7be01d.pending.json   its unsent input (pending_input)
        input_history.json                                   the input box history

A workspace folder is a readable slug of the workspace path plus a short hash of the
full path: the slug is for people browsing the folder, the hash keeps two workspaces
whose slugs coincide (or were cut short) apart.

Every function here takes an optional `root` (the data directory) so tests and callers
with their own layout never touch the real home.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from pathlib import Path

from platformdirs import user_data_dir

APP_NAME = "ink"
SESSION_SUFFIX = ".jsonl"
PENDING_SUFFIX = ".pending.json"
INPUT_HISTORY_NAME = "input_history.json"

# Long enough to make a collision between two sessions of one workspace vanishingly
# rare, short enough to type a prefix of it.
SESSION_ID_HEX_CHARS = 12
WORKSPACE_HASH_HEX_CHARS = 10
# Keep folder names well under common file-name limits (255 bytes).
MAX_SLUG_CHARS = 60

# UTC with milliseconds, fixed width and no colons (not allowed in Windows names), so
# file names sort by start time as plain strings.
_STAMP_FORMAT = "%Y-%m-%dT%H-%M-%S"
_SLUG_UNSAFE = re.compile(r"[^\w.]+")
_NAME_PATTERN = re.compile(
    r"^(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)_(?P<id>[0-9a-f]+)\.jsonl$"
)


def data_root(root: Path | None = None) -> Path:
    """The app's data directory: `root` when given, else platformdirs' user data dir."""
    return Path(root) if root is not None else Path(user_data_dir(APP_NAME))


def sessions_root(root: Path | None = None) -> Path:
    return data_root(root) / "sessions"


def canonical_workspace(workspace: Path | str) -> Path:
    """The workspace path as the store keys it: absolute, symlinks resolved.

    Resolving means `ink` started from `./proj` and from `/home/me/proj` (or through a
    symlink) finds the same sessions.
    """
    return Path(workspace).expanduser().resolve()


def workspace_slug(workspace: Path | str) -> str:
    """A folder name for `workspace`: readable slug + "-" + hash of the full path."""
    path = canonical_workspace(workspace)
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{_readable(path)}-{digest[:WORKSPACE_HASH_HEX_CHARS]}"


def _readable(path: Path) -> str:
    """The path's last parts joined by "-", as many whole parts as fit.

    The tail of a path is what tells workspaces apart, and whole parts read better
    than a name cut in the middle.
    """
    names = [_SLUG_UNSAFE.sub("-", part).strip("-.") for part in path.parts]
    names = [name for name in names if name]
    kept: list[str] = []
    for name in reversed(names):
        if len("-".join([name, *kept])) > MAX_SLUG_CHARS:
            break
        kept.insert(0, name)
    if not kept and names:
        # One part longer than the limit: its end is still better than nothing.
        kept = [names[-1][-MAX_SLUG_CHARS:].lstrip("-.")]
    return "-".join(kept) or "root"


def workspace_dir(workspace: Path | str, root: Path | None = None) -> Path:
    """The folder holding `workspace`'s sessions (not created here)."""
    return sessions_root(root) / workspace_slug(workspace)


def new_session_id() -> str:
    return secrets.token_hex(SESSION_ID_HEX_CHARS // 2)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def session_file_name(started: dt.datetime, session_id: str) -> str:
    stamp = started.astimezone(dt.UTC)
    millis = stamp.microsecond // 1000
    return f"{stamp.strftime(_STAMP_FORMAT)}-{millis:03d}Z_{session_id}{SESSION_SUFFIX}"


def session_id_from_name(name: str) -> str | None:
    """The id in a session file name, or None when the name is not a session's."""
    match = _NAME_PATTERN.match(name)
    return match.group("id") if match else None


def pending_input_path(session_path: Path) -> Path:
    """`<session>.pending.json` beside the session; never matches `*.jsonl` listings."""
    name = session_path.name
    stem = name[: -len(SESSION_SUFFIX)] if name.endswith(SESSION_SUFFIX) else name
    return session_path.with_name(stem + PENDING_SUFFIX)


def input_history_path(workspace: Path | str, root: Path | None = None) -> Path:
    return workspace_dir(workspace, root) / INPUT_HISTORY_NAME
