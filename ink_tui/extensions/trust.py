"""Remembering which project extension folders the user allowed to run.

One JSON file in the user data folder (`~/.local/share/ink/trusted-extensions.json`):

    {"version": 1, "folders": {"/real/path/.ink/extensions": {"hash": "sha256:…"}}}

keyed by the folder's real path (symlinks resolved) and holding a hash of every file
in it, so a changed, added or removed file means the folder is asked about again.
The same file keeps the project config files the user trusted (`session/project_trust.py`)
under `"config_files"`, each with the hash of its bytes.
"Not now" is not remembered: the next start asks again. A store that cannot be read
counts as empty (nothing trusted); one that cannot be written is reported by the caller.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from ink_tui.session.atomic_file import write_atomic

VERSION = 1


def default_trust_file() -> Path:
    return Path(user_data_dir("ink", appauthor=False)) / "trusted-extensions.json"


def folder_key(folder: Path) -> str:
    return str(folder.resolve())


def folder_hash(folder: Path) -> str:
    """A hash of every file under `folder` (names and bytes), in a stable order."""
    digest = hashlib.sha256()
    root = folder.resolve()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


class TrustStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_trust_file()

    def _data(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _read(self, section: str = "folders") -> dict[str, Any]:
        entries = self._data().get(section)
        return entries if isinstance(entries, dict) else {}

    def _write(self, section: str, key: str, digest: str) -> None:
        data = self._data()
        entries = self._read(section)
        entries[key] = {"hash": digest}
        data.update({"version": VERSION, section: entries})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2, sort_keys=True)
        write_atomic(self.path, (text + "\n").encode())

    def trusted_hash(self, section: str, key: str) -> str | None:
        """The hash remembered for `key` in `section` ("folders", "config_files")."""
        entry = self._read(section).get(key)
        digest = entry.get("hash") if isinstance(entry, dict) else None
        return digest if isinstance(digest, str) else None

    def remember(self, section: str, key: str, digest: str) -> None:
        """Trust `key` with `digest`; raises OSError when the store cannot be written."""
        self._write(section, key, digest)

    def is_trusted(self, folder: Path) -> bool:
        entry = self._read().get(folder_key(folder))
        if not isinstance(entry, dict):
            return False
        try:
            return entry.get("hash") == folder_hash(folder)
        except OSError:
            return False

    def trust(self, folder: Path) -> None:
        """Remember `folder` as it is now; raises OSError when the store cannot be written."""
        self._write("folders", folder_key(folder), folder_hash(folder))
