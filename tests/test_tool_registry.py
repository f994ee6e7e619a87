from __future__ import annotations

import inspect

import jsonschema
import pytest

from ink_tui.core.tool_api import spec_of
from ink_tui.tools import default_tools

CONCURRENCY_SAFE = {
    "read": True,
    "ls": True,
    "grep": True,
    "find": True,
    "write": False,
    "edit": False,
    "bash": False,
}

EXAMPLES = {
    "read": {"path": "a.py", "offset": 3, "limit": 10},
    "write": {"path": "a.py", "content": "x"},
    "edit": {"path": "a.py", "edits": [{"old_text": "a", "new_text": "b"}]},
    "bash": {"command": "ls", "timeout": 2.5},
    "ls": {},
    "grep": {"pattern": "foo", "path": "src", "glob": "*.py", "ignore_case": True},
    "find": {"pattern": "**/*.py"},
}

BAD = {
    "read": {"path": "a.py", "offset": 0},
    "write": {"path": "a.py"},
    "edit": {"path": "a.py", "edits": []},
    "bash": {"command": "ls", "timeout": 0},
    "ls": {"path": "a", "extra": 1},
    "grep": {"pattern": ""},
    "find": {},
}


def test_default_tools_has_one_of_each() -> None:
    tools = default_tools()
    assert sorted(tool.name for tool in tools) == sorted(CONCURRENCY_SAFE)
    for tool in tools:
        assert tool.concurrency_safe is CONCURRENCY_SAFE[tool.name]
        assert inspect.iscoroutinefunction(tool.execute)
        assert len(tool.description) > 80
        assert spec_of(tool).parameters is tool.parameters


@pytest.mark.parametrize("tool", default_tools(), ids=lambda tool: tool.name)
def test_schemas_are_strict_and_valid(tool) -> None:
    schema = tool.parameters
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) <= set(schema["properties"])
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(EXAMPLES[tool.name])
    assert not validator.is_valid(BAD[tool.name])
