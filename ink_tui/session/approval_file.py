"""Saving an "always" answer as a rule in the workspace's `.ink/config.toml`.

The file is the user's: its comments, order and other settings stay as they are. Only
the `allow` array of the `[approval]` table is written (added, or replaced by one line
holding the old rules plus the new one). The result is parsed again before it is
written, and must equal the old settings plus the rule; anything else (the file is not
valid TOML, `approval` is written as an inline table or dotted keys) is refused with a
message, and the file is left untouched. Written atomically.

A file that was trusted (`project_trust`) before, or did not exist, is trusted as written:
the user's own saved rules must not make their project config untrusted. A file that was
not trusted stays so: ink's write does not vouch for what someone else put there.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from ink_tui.session.atomic_file import write_atomic


def add_allow_rule(path: Path, rule: str, trust_file: Path | None = None) -> None:
    """Add `rule` to `[approval] allow` in `path` (created if missing). Raises ValueError
    or OSError with what went wrong; a rule already there changes nothing. `trust_file`:
    the trust store (None: the user's)."""
    from ink_tui.session.project_trust import trust_file_now, trust_state

    text = path.read_text(encoding="utf-8-sig") if path.exists() else ""
    was_trusted = not path.exists() or trust_state(path, trust_file) is None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not valid TOML ({error}); fix it first") from None
    approval = data.get("approval", {})
    if not isinstance(approval, dict):
        raise ValueError(f"'approval' in {path} is not a table")
    rules = approval.get("allow", [])
    if not isinstance(rules, list):
        raise ValueError(f"[approval] allow in {path} is not a list")
    if rule in rules:
        return
    updated = _with_rule(text, [*rules, rule], "approval" in data, "allow" in approval)
    expected = {**data, "approval": {**approval, "allow": [*rules, rule]}}
    try:
        if tomllib.loads(updated) != expected:
            raise ValueError
    except (tomllib.TOMLDecodeError, ValueError):
        raise ValueError(
            f"cannot add the rule to {path} without rewriting it; add "
            f'"{rule}" to [approval] allow by hand'
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, updated.encode("utf-8"))
    if was_trusted:
        try:
            trust_file_now(path, trust_file)
        except OSError as error:
            raise OSError(
                f"saved the rule, but could not remember trusting {path}: {error}"
            ) from error


def _array(rules: list[Any]) -> str:
    # JSON strings are valid TOML basic strings for what rules hold.
    return "[" + ", ".join(json.dumps(rule, ensure_ascii=False) for rule in rules) + "]"


def _with_rule(text: str, rules: list[Any], has_table: bool, has_allow: bool) -> str:
    line = f"allow = {_array(rules)}"
    lines = text.splitlines(keepends=True)
    if not has_table:
        body = text if not text or text.endswith("\n") else text + "\n"
        gap = "\n" if body.strip() else ""
        return f"{body}{gap}[approval]\n{line}\n"
    header = _header_index(lines)
    if header is None:
        return text  # dotted keys or an inline table: the check refuses it
    if not has_allow:
        lines.insert(header + 1, line + "\n")
        return "".join(lines)
    for start in range(header + 1, len(lines)):
        stripped = lines[start].lstrip()
        if stripped.startswith("["):
            break
        key, equals, _ = stripped.partition("=")
        if equals and key.strip() in ("allow", '"allow"'):
            # The old array may span lines: take lines until they parse as one value.
            for end in range(start, len(lines)):
                chunk = "".join(lines[start : end + 1])
                try:
                    tomllib.loads(chunk)
                except tomllib.TOMLDecodeError:
                    continue
                lines[start : end + 1] = [line + "\n"]
                return "".join(lines)
            break
    return text


def _header_index(lines: list[str]) -> int | None:
    for index, raw in enumerate(lines):
        stripped = raw.split("#", 1)[0].strip()
        if stripped.replace(" ", "") == "[approval]":
            return index
    return None
