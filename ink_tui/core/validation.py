"""Checking a tool call's arguments before it runs.

The message goes back to the model as an error result, so it says what was wrong and
what the tool expects, in a form the model can fix its call from.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ink_tui.core.messages import ToolCall

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from ink_tui.core.tool_api import Tool


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Validator:
    # Imported here: jsonschema is only needed once a tool is called, not at start-up.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema_json))


def _where(path: Any) -> str:
    parts = [str(p) for p in path]
    return "/".join(parts) if parts else "arguments"


def validation_error(call: ToolCall, tools: dict[str, Tool]) -> str | None:
    """Return why `call` cannot run, or None when it may."""
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return f"Unknown tool {call.name!r}. Available tools: {known}. Call one of these instead."
    if call.arguments_error is not None:
        return (
            f"Could not run {call.name}: {call.arguments_error}. Arguments must be one JSON "
            f"object matching this schema: {json.dumps(tool.parameters)}"
        )
    validator = _validator(json.dumps(tool.parameters, sort_keys=True))
    errors = sorted(validator.iter_errors(call.arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    problems = "; ".join(f"{_where(e.path)}: {e.message}" for e in errors[:5])
    return (
        f"Invalid arguments for {call.name}: {problems}. "
        f"Expected arguments matching this schema: {json.dumps(tool.parameters)}"
    )
