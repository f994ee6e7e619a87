"""Helpers for the tool tests (tests/conftest.py belongs to the core tests)."""

from __future__ import annotations

import os
from pathlib import Path

from ink_tui.core.abort import AbortController
from ink_tui.core.tool_api import ToolContext, ToolLimits


def make_ctx(workspace: Path, limits: ToolLimits | None = None) -> ToolContext:
    return ToolContext(workspace, AbortController().signal, limits or ToolLimits())


def make_ctx_with_abort(
    workspace: Path, limits: ToolLimits | None = None
) -> tuple[ToolContext, AbortController]:
    controller = AbortController()
    return ToolContext(workspace, controller.signal, limits or ToolLimits()), controller


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


def group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
