"""Where extensions live, and which of them may load.

- The user's: `*.py` in `<user config dir>/extensions/` (`~/.config/ink/extensions/`,
  following XDG_CONFIG_HOME). The user put them there: they always load.
- The project's: `*.py` in `<workspace>/.ink/extensions/`. A cloned repository could
  ship one, so they load only once the user trusted that folder (`trust.py`); a change
  to any file there asks again.

Files whose name starts with `_` or `.` are not loaded (helpers an extension imports),
but they count for the folder's trust: changing one asks again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ink_tui.session.config_files import user_config_dir


def user_extensions_dir(config_dir: Path | None = None) -> Path:
    return (config_dir or user_config_dir()) / "extensions"


def project_extensions_dir(workspace: Path) -> Path:
    return workspace / ".ink" / "extensions"


def extension_files(folder: Path) -> list[Path]:
    """The files to load from `folder`, sorted by name; [] if there is no such folder."""
    try:
        return sorted(
            path
            for path in folder.glob("*.py")
            if path.is_file() and not path.name.startswith(("_", "."))
        )
    except OSError:
        return []


@dataclass(slots=True)
class Found:
    user: list[Path] = field(default_factory=list)
    project_dir: Path | None = None
    project: list[Path] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.user or self.project)


def find_extensions(workspace: Path, config_dir: Path | None = None) -> Found:
    user_dir = user_extensions_dir(config_dir)
    project_dir = project_extensions_dir(workspace)
    found = Found(user=extension_files(user_dir))
    # The user folder may be the project folder (a workspace at ~/.config/..): once.
    if _same(project_dir, user_dir):
        return found
    project = extension_files(project_dir)
    if project:
        found.project_dir = project_dir
        found.project = project
    return found


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
