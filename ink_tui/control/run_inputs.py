"""What a run starts from: a line, a message an extension injected, or a /compact; and how
a queued entry becomes one (an extension's entry keeps its sender)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ink_tui.control.input_queue import QueueEntry
from ink_tui.core.messages import QueueMode, UserMessage

# How `RunController.send_message` delivers an injected message: as queued input, or
# with the next prompt ("next_turn").
DeliverAs = Literal[QueueMode, "next_turn"]


@dataclass(slots=True)
class Compact:
    """A /compact waiting to run (see `RunController.compact`)."""

    instructions: str


RunInput = str | UserMessage | Compact


def message_of(entry: QueueEntry) -> UserMessage:
    """A queued entry as the loop appends it: an extension's keeps its sender."""
    source = None if entry.source == "user" else entry.source
    return UserMessage(entry.text, entry.mode, source=source, custom_type=entry.custom_type)


def as_input(entry: QueueEntry) -> str | UserMessage:
    """What a queued entry starts when it runs as a run of its own."""
    if entry.source == "user":
        return entry.text
    message = message_of(entry)
    message.kind = "prompt"
    return message
