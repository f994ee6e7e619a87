"""The declared dependencies match what the code imports, and their floors are what CI tests.

`.ci/run` installs `constraints-floor.txt` and runs the suite on it; that proves the floors
only while each pin there is the floor pyproject.toml declares. And a library the code
imports but does not declare arrives (or not) by chance, at any version.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = PROJECT["optional-dependencies"]


def requirements(*groups: list[str]) -> list[Requirement]:
    found = [Requirement(line) for group in groups for line in group]
    return [r for r in found if canonicalize_name(r.name) != canonicalize_name(PROJECT["name"])]


def pins(path: Path) -> dict[str, str]:
    pinned = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pinned[canonicalize_name(name)] = version.strip()
    return pinned


def floor(requirement: Requirement) -> str | None:
    # An exact pin (`==`) is its own floor.
    lows = [s.version for s in requirement.specifier if s.operator in (">=", "==")]
    return lows[0] if len(lows) == 1 else None


def test_every_declared_range_has_a_floor_and_constraints_floor_pins_it() -> None:
    pinned = pins(ROOT / "constraints-floor.txt")
    wrong = {}
    for requirement in requirements(PROJECT["dependencies"], *EXTRAS.values()):
        low = floor(requirement)
        name = canonicalize_name(requirement.name)
        if low is None or name not in pinned or Version(pinned[name]) != Version(low):
            wrong[name] = (str(requirement.specifier), pinned.get(name))
    assert not wrong, f"declared range vs constraints-floor.txt pin: {wrong}"


def test_the_pinned_set_is_inside_every_declared_range() -> None:
    pinned = pins(ROOT / "constraints.txt")
    outside = {}
    for requirement in requirements(PROJECT["dependencies"], *EXTRAS.values()):
        version = pinned.get(canonicalize_name(requirement.name))
        if version is None or version not in requirement.specifier:
            outside[requirement.name] = (str(requirement.specifier), version)
    assert not outside, f"declared range vs constraints.txt pin: {outside}"


def imported_modules(folder: Path) -> set[str]:
    """Top-level names of every `import` in the package, those inside functions too."""
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"ink_tui"}


def test_every_library_the_package_imports_is_declared() -> None:
    declared = {canonicalize_name(r.name) for r in requirements(PROJECT["dependencies"])}
    # The rg extra's `ripgrep` is a binary, not imported; nothing else may be optional.
    distributions = packages_distributions()
    undeclared = {}
    for module in sorted(imported_modules(ROOT / "ink_tui")):
        owners = {canonicalize_name(d) for d in distributions.get(module, [module])}
        if not owners & declared:
            undeclared[module] = sorted(owners)
    assert not undeclared, f"imported by ink_tui but not in [project] dependencies: {undeclared}"


def privately_imported(folder: Path) -> set[str]:
    """Libraries the package imports a private module or name from (`h11._readers`,
    `from pygments.token import _TokenType`). Private attributes reached at run time
    (`Style._add`) are not seen here: pyproject.toml names those beside each range."""
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if any(part.startswith("_") for part in alias.name.split(".")[1:]):
                        names.add(alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                parts = node.module.split(".")
                if any(p.startswith("_") for p in parts[1:]) or any(
                    alias.name.startswith("_") for alias in node.names
                ):
                    names.add(parts[0])
    return names - set(sys.stdlib_module_names) - {"ink_tui", "__future__"}


def test_libraries_whose_private_parts_are_imported_are_capped() -> None:
    """A private module or name may change in any release past the tested ones."""
    by_name = {canonicalize_name(r.name): r for r in requirements(PROJECT["dependencies"])}
    distributions = packages_distributions()
    uncapped = []
    for module in sorted(privately_imported(ROOT / "ink_tui")):
        for owner in distributions.get(module, [module]):
            requirement = by_name.get(canonicalize_name(owner))
            if requirement is None or not any(s.operator == "<" for s in requirement.specifier):
                uncapped.append(module)
    assert not uncapped, f"private parts imported from libraries with no upper bound: {uncapped}"
