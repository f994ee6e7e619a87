"""Walking a tree the way git sees it: .gitignore files honoured (nested ones too), .git
skipped, symlinks not followed.

The order is depth-first with each directory's entries sorted by name, the same order
ripgrep uses with `--sort path`, so the Python grep fallback prints what rg prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from ink_tui.tools.globs import Override

GIT_DIR = ".git"
GITIGNORE = ".gitignore"


@dataclass(frozen=True, slots=True)
class _Rule:
    base: Path
    spec: GitIgnoreSpec


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The ignore files in force at one directory, shallowest first."""

    rules: tuple[_Rule, ...] = ()

    def with_file(self, base: Path, file: Path) -> IgnoreRules:
        spec = _load(file)
        if spec is None:
            return self
        return IgnoreRules((*self.rules, _Rule(base, spec)))

    def descend(self, directory: Path) -> IgnoreRules:
        return self.with_file(directory, directory / GITIGNORE)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        # The deepest file with an opinion wins, so a nested "!pattern" can re-include.
        for rule in reversed(self.rules):
            try:
                relative = path.relative_to(rule.base).as_posix()
            except ValueError:
                continue
            result = rule.spec.check_file(relative + "/" if is_dir else relative)
            if result.include is not None:
                return bool(result.include)
        return False


def _load(file: Path) -> GitIgnoreSpec | None:
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = text.splitlines()
    return GitIgnoreSpec.from_lines(lines) if lines else None


def rules_for(start: Path, root: Path) -> IgnoreRules:
    """Rules that apply at `start` from the ignore files between `root` and it.

    A `start` that is itself ignored was asked for by name, so (like ripgrep) the rules
    that ignore it are dropped.
    """
    rules = IgnoreRules().with_file(root, root / GIT_DIR / "info" / "exclude")
    directory = root
    for part in start.relative_to(root).parts:
        rules = rules.descend(directory)
        directory = directory / part
        if rules.ignored(directory, is_dir=True):
            return IgnoreRules()
    return rules


def walk_files(
    start: Path,
    root: Path,
    *,
    override: Override | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Iterator[Path]:
    """Regular files under `start`, skipping ignored paths. Blocking: run in a thread.

    `root` is where ignore rules begin (the workspace); `override` (see globs.py) is
    asked about every entry first, with its path relative to `root` (or to `start` when
    `start` lies outside `root`).
    """
    anchor = root if start == root or root in start.parents else start
    yield from _visit(start, anchor, rules_for(start, anchor), override, should_stop)


def _visit(
    directory: Path,
    root: Path,
    rules: IgnoreRules,
    override: Override | None,
    should_stop: Callable[[], bool],
) -> Iterator[Path]:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda entry: entry.name)
    except OSError:
        return
    rules = rules.descend(directory)
    for entry in entries:
        if should_stop():
            return
        if entry.name == GIT_DIR:
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if not (is_dir or is_file):
            continue
        path = Path(entry.path)
        relative = path.relative_to(root).as_posix()
        decision = None if override is None else override(relative, is_dir)
        if decision is False or (decision is None and rules.ignored(path, is_dir)):
            continue
        if is_dir:
            yield from _visit(path, root, rules, override, should_stop)
        else:
            yield path
