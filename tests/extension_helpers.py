"""Shared pieces of the extension tests: where extension files go, a probe extension."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

# An extension whose /inject command sends whatever message the test describes in JSON:
# the test decides when (running or idle) and how (deliver_as, trigger_turn).
PROBE = """
import json


def setup(ink):
    def inject(argument):
        spec = json.loads(argument)
        ink.send_message(
            spec["content"],
            custom_type=spec.get("type", "fact"),
            deliver_as=spec["as"],
            trigger_turn=spec.get("trigger", False),
        )

    ink.register_command("/inject", inject, "send a message the test describes")
"""


def write_extension(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def inject_spec(content: str, deliver_as: str, *, trigger: bool = False, kind: str = "fact") -> str:
    return json.dumps({"content": content, "as": deliver_as, "trigger": trigger, "type": kind})


def marked(name: str, kind: str, content: str) -> str:
    """What the model reads for an extension's message."""
    return f"[from extension {name!r}, {kind}; not written by the user] {content}"


def user_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]
