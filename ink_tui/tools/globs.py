"""Gitignore-style globs, as ripgrep's --glob and git use them.

A pattern without "/" matches a name at any depth (`*.py`); one with "/" is anchored at
the workspace (`src/*.ts`, `src/**/test_*.py`); `**` spans directories.
"""

from __future__ import annotations

from collections.abc import Callable

from pathspec import GitIgnoreSpec

from ink_tui.core.tool_api import ToolError

# Decides one walked entry: True keeps it even if .gitignore says otherwise, False drops
# it, None leaves it to the .gitignore rules. Takes the workspace-relative POSIX path and
# whether the entry is a directory.
Override = Callable[[str, bool], bool | None]


def compile_glob(pattern: str) -> GitIgnoreSpec:
    if pattern.count("[") > pattern.count("]"):
        raise ToolError(f"invalid glob {pattern!r}: unclosed character class; missing ']'")
    try:
        return GitIgnoreSpec.from_lines([pattern])
    except (ValueError, TypeError) as exc:
        raise ToolError(f"invalid glob {pattern!r}: {exc}") from None


def matches(spec: GitIgnoreSpec, relative: str, is_dir: bool) -> bool:
    return spec.match_file(relative + "/" if is_dir else relative)


def glob_override(glob: str) -> Override:
    """ripgrep's --glob semantics for a walk.

    A matching glob beats .gitignore; with a positive glob, files that do not match are
    left out (directories are still entered); a "!" glob leaves out what it matches.
    """
    negated = glob.startswith("!")
    spec = compile_glob(glob[1:] if negated else glob)

    def decide(relative: str, is_dir: bool) -> bool | None:
        hit = matches(spec, relative, is_dir)
        if negated:
            return False if hit else None
        if hit:
            return True
        return None if is_dir else False

    return decide
