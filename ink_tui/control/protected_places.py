"""Protected places: a write there asks under every approval policy but `auto`.

A write into one of these can give the model more than the write itself (a rule or a
policy it would then run under, code that loads without a question, a session it would
be fed again), so neither a rule (`allow = ["write"]`, `["edit"]`) nor a "session" or
"always" answer allows it; the question offers "allow once" or "deny", and print mode
refuses. Only `--approval auto` writes there without asking. The list:

- the workspace's `.ink/` and `.git/` folders, everything in them and the folders
  themselves; also any folder of those names deeper in the workspace (a nested
  repository's hooks, a sub-project's config), names compared case-insensitively;
- ink's user config folder, the one the config loader reads
  (`platformdirs.user_config_dir("ink")`: `~/.config/ink`, or `$XDG_CONFIG_HOME/ink`):
  its `config.toml` holds rules and a policy, its context files reach every prompt;
- the user's extension folder (`<user config folder>/extensions`): files there load
  with no trust question;
- the project's extension folder (`<workspace>/.ink/extensions`);
- the trust store (`<user data folder>/trusted-extensions.json`): which project
  extension folders load without asking;
- ink's data folder (`platformdirs.user_data_dir("ink")`: `~/.local/share/ink`, or
  `$XDG_DATA_HOME/ink`): the sessions `ink -c` sends the model again, input history,
  the trust store.

Places are compared by their real paths (symlinks resolved, case folded), with the
target of a path argument resolved the way the tools open it (`tools.path_target`), so
a link to a protected place is that place. `bash` commands are not judged by path: they
ask under `ask` and `edits` unless a `bash` rule allows them.

The folders are the platformdirs ones, spelled here again rather than imported, since
`control/` does not import `session/` or `extensions/`; a test holds them equal to what
the config loader, the extension loader, the trust store and the session store use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Literal

import platformdirs

from ink_tui.tools.path_target import PathTarget, real_root, resolve

APP_NAME = "ink"
# Folder names inside the workspace (at any depth) that are protected.
WORKSPACE_FOLDERS = (".ink", ".git")
TRUST_FILE_NAME = "trusted-extensions.json"

Place = Literal["inside", "outside", "protected"]


def user_config_dir() -> Path:
    """ink's user config folder (as `session.config_files.user_config_dir`)."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    """ink's data folder: sessions and the trust store (as `session.store_paths`)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True, slots=True)
class Protected:
    # The real path of the folder or file.
    path: Path
    # How the question names it: "ink's user config folder (~/.config/ink)".
    label: str

    @property
    def folded(self) -> PurePath:
        return _folded(self.path)


@dataclass(frozen=True, slots=True)
class Judgement:
    """Where a path argument's target is, and why it asks when it does."""

    target: PathTarget
    place: Place
    # "writes into .git/: protected", "writes outside the workspace: /tmp/x"; "" inside.
    why: str = ""


class ProtectedPlaces:
    """The protected places of one workspace, and the judgement of a path against them."""

    def __init__(
        self,
        workspace: Path,
        *,
        config_dir: Path | None = None,
        data_dir: Path | None = None,
        trust_file: Path | None = None,
    ) -> None:
        self.root = real_root(workspace)
        config = config_dir if config_dir is not None else user_config_dir()
        data = data_dir if data_dir is not None else user_data_dir()
        trust = trust_file if trust_file is not None else data / TRUST_FILE_NAME
        places = [
            (config / "extensions", "the user's extension folder"),
            (config, "ink's user config folder"),
            (self.root / ".ink" / "extensions", "the project's extension folder"),
            (trust, "the extension trust store"),
            (data, "ink's data folder (sessions, trust store)"),
        ]
        # Most specific first, so a file in the user's extension folder is named as such.
        self.places = tuple(Protected(_real(path), label) for path, label in places)

    def judge(self, target: PathTarget) -> Judgement:
        """Where `target.real` is: protected (and which place), inside or outside."""
        real = target.real
        relative = target.relative
        if relative is not None:
            parts = relative.parts
            for index, name in enumerate(parts):
                if name.casefold() in WORKSPACE_FOLDERS:
                    folder = "/".join(parts[: index + 1])
                    return Judgement(target, "protected", f"writes into {folder}/: protected")
        folded = _folded(real)
        for place in self.places:
            if folded.is_relative_to(place.folded):
                shown = _home_form(place.path)
                why = f"writes into {place.label} ({shown}): protected"
                return Judgement(target, "protected", why)
        if relative is None:
            return Judgement(target, "outside", f"writes outside the workspace: {real}")
        return Judgement(target, "inside")


def _folded(path: Path) -> PurePath:
    """`path` with its case folded: on a case-insensitive file system (macOS, Windows, a
    casefold folder on Linux) `.Config/INK` is ink's config folder, so places compare
    folded. Where case matters this protects a few more paths, which then ask."""
    return PurePath(str(path).casefold())


def _real(path: Path) -> Path:
    return resolve(os.path.abspath(os.path.expanduser(path)))


def _home_form(path: Path) -> str:
    try:
        return "~/" + path.relative_to(_real(Path.home())).as_posix()
    except (ValueError, RuntimeError):
        return str(path)
