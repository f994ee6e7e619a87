"""Reading API keys from the environment or a private file, and saying where one came from.

A key only ever lives in `ApiKey.value`, which is left out of reprs; everything meant for
people (reports, messages) uses `ApiKey.source` or `describe_*`, never the value.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ink_tui.session.config_files import display_path

# Larger than any real key; a bigger file is certainly the wrong one.
MAX_KEY_FILE_BYTES = 64 * 1024


class ApiKeyError(ValueError):
    """A key file that exists but must not or cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class ApiKey:
    value: str = field(repr=False)
    # "env INK_API_KEY", "file ~/.config/ink/openrouter.key", "flag --api-key".
    source: str

    def describe(self) -> str:
        return f"set (from {self.source})"


def key_from_env(name: str, environ: Mapping[str, str]) -> ApiKey | None:
    value = environ.get(name, "").strip()
    return ApiKey(value, f"env {name}") if value else None


def check_key_file_permissions(path: Path) -> None:
    """Refuse a key file that other users could read: it is a password."""
    if os.name == "nt":
        # Windows has no group/other mode bits; its ACLs are out of scope here.
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        shown = display_path(path)
        raise ApiKeyError(
            f"API key file {shown} is readable or writable by other users (mode "
            f"{mode:04o}); run `chmod 600 {shown}` so only you can read it; key not used"
        )


def key_from_file(path: Path) -> ApiKey:
    """The key in `path` (surrounding whitespace removed), or ApiKeyError saying why not."""
    shown = display_path(path)
    try:
        if not path.is_file():
            raise ApiKeyError(f"API key file {shown} does not exist; key not used")
        check_key_file_permissions(path)
        data = path.read_bytes()[: MAX_KEY_FILE_BYTES + 1]
    except OSError as error:
        raise ApiKeyError(f"API key file {shown}: cannot read ({error.strerror})") from None
    if len(data) > MAX_KEY_FILE_BYTES:
        raise ApiKeyError(f"API key file {shown} is too large to hold a key; key not used")
    try:
        value = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ApiKeyError(f"API key file {shown} is not text; key not used") from None
    if not value:
        raise ApiKeyError(f"API key file {shown} is empty; key not used")
    return ApiKey(value, f"file {shown}")
