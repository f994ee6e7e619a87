"""The first tool call of a session imports nothing on the event loop.

Checking a call's arguments needs jsonschema (about 100 ms to import, cold). The app
imports what the controller needs on a thread after the first frame; jsonschema was not
among it, so the first tool call froze the UI for that long (found by the interrupt
storm's heartbeat). Run in a fresh interpreter, so earlier tests' imports do not count.
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from ink_tui.ui.preload import import_controller_modules
import_controller_modules()
from ink_tui.core.messages import ToolCall
from ink_tui.core.validation import validation_error
from ink_tui.tools import default_tools
tools = {tool.name: tool for tool in default_tools()}
before = set(sys.modules)
assert validation_error(ToolCall("c1", "bash", {"command": "ls"}), tools) is None
print(" ".join(sorted(set(sys.modules) - before)))
"""


def test_first_tool_call_after_preload_imports_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.split() == [], f"imported at the first tool call: {done.stdout}"
