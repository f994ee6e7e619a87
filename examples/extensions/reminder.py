"""Reminder: after the model changes a file, ask it to run the tests.

Copy to ~/.config/ink/extensions/ (every workspace) or <workspace>/.ink/extensions/.

Once per prompt, after the first successful `edit` or `write`, it queues a follow-up
marked as this extension's task: it reaches the model when it would otherwise stop, and
shows in the queue with the badge "reminder" (delete it there if you do not want it).
When your own prompt, steer or follow-up already talks about tests, it stays quiet.
"""

from __future__ import annotations

import re
from typing import Any

from ink_tui.extensions import Ink

MESSAGE = "Run the tests for what you changed, and fix anything that fails."
MENTIONS_TESTS = re.compile(r"\b(tests?|pytest|testing|unittest)\b", re.IGNORECASE)
CHANGES_FILES = {"edit", "write"}


def setup(ink: Ink) -> None:
    # Per prompt: did the user ask about tests, and did we remind already?
    state = {"asked": False, "reminded": False}

    def on_user_message(event: dict[str, Any]) -> None:
        if event["source"] != "user":
            return  # our own message (or another extension's) says nothing of the user
        if event["kind"] == "prompt":
            state["asked"] = False
            state["reminded"] = False
        if MENTIONS_TESTS.search(event["text"]):
            state["asked"] = True

    def on_tool_end(event: dict[str, Any]) -> None:
        if event["tool_name"] not in CHANGES_FILES or event["is_error"]:
            return
        if state["asked"] or state["reminded"]:
            return
        state["reminded"] = True
        ink.send_message(MESSAGE, custom_type="task", deliver_as="follow_up")

    ink.on("user_message", on_user_message)
    ink.on("tool_execution_end", on_tool_end)
