"""The `ink` object an extension's `setup(ink)` receives, and `block(reason)`.

Everything here only records what the extension asks for and hands it to its host
(`host.ExtensionHost`), which owns the session side: dispatching events, the tool gate,
injected messages and commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from ink_tui.control.public_event_types import PUBLIC_EVENT_TYPES
from ink_tui.control.run_inputs import DeliverAs

DELIVER_AS: tuple[str, ...] = get_args(DeliverAs)
TOOL_CALL = "tool_call"
# Every name `ink.on` accepts: the public events, and the check before a tool runs.
EVENT_NAMES: tuple[str, ...] = (*PUBLIC_EVENT_TYPES, TOOL_CALL)
COMMAND_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

Handler = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Block:
    """What a `tool_call` handler returns to stop a call; the model reads `reason`."""

    reason: str


def block(reason: str) -> Block:
    """Stop the tool call; the model receives `reason` as the call's error result."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("block() needs a reason the model can act on")
    return Block(reason.strip())


@dataclass(frozen=True, slots=True)
class ToolCallInfo:
    """A call the model asked for, before it runs (arguments already validated)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""


class InkHost(Protocol):
    """What an `Ink` hands its requests to: `host.ExtensionHost`, which imports this module
    (so the dependency is named by shape here, and imports point one way)."""

    @property
    def workspace(self) -> Path: ...

    @property
    def is_busy(self) -> bool: ...

    def add_handler(self, extension: str, event_name: str, handler: Handler) -> None: ...

    def add_command(
        self, extension: str, name: str, handler: Handler, description: str
    ) -> None: ...

    def send_message(
        self,
        extension: str,
        content: str,
        custom_type: str,
        deliver_as: DeliverAs,
        trigger_turn: bool,
    ) -> int | None: ...

    def notify(
        self, extension: str, text: str, level: Literal["info", "warning", "error"]
    ) -> None: ...


class Ink:
    """One extension's handle on the session. Call it from the event loop (handlers and
    commands run there); it is not thread-safe."""

    def __init__(self, host: InkHost, name: str, path: Path) -> None:
        self._host = host
        self.name = name
        self.path = path

    @property
    def workspace(self) -> Path:
        """The folder the session works in (resolved)."""
        return self._host.workspace

    @property
    def is_busy(self) -> bool:
        return self._host.is_busy

    def on(self, event_name: str, handler: Handler) -> None:
        """Call `handler(event)` for every public event of that name (a dict, see
        docs/events.md), or `handler(call)` before each tool call for "tool_call".
        Sync or async; an exception (SystemExit too) becomes an `extension_error` event."""
        if event_name not in EVENT_NAMES:
            known = ", ".join(EVENT_NAMES)
            raise ValueError(f"unknown event {event_name!r}; known: {known}")
        if not callable(handler):
            raise TypeError("the handler must be callable")
        self._host.add_handler(self.name, event_name, handler)

    def send_message(
        self,
        content: str,
        *,
        custom_type: str,
        deliver_as: DeliverAs = "steer",
        trigger_turn: bool = False,
    ) -> int | None:
        """Inject a message marked as this extension's (of kind `custom_type`: "fact",
        "constraint", "task", ...). Running: "steer" / "follow_up" queue it (the queue
        entry's id is returned), "next_turn" joins the next prompt. Idle: with
        `trigger_turn` it starts a run, else it is only recorded in the history
        ("next_turn" still waits for the next prompt). Raises `ExtensionStopped` when
        the extension is over its budget (`budget.py`) until the next user input."""
        if not isinstance(content, str) or not content.strip():
            raise ValueError("send_message needs some content")
        if not isinstance(custom_type, str) or not custom_type.strip():
            raise ValueError('custom_type must say what the message is, e.g. "fact" or "task"')
        if deliver_as not in DELIVER_AS:
            raise ValueError(f"deliver_as must be one of {', '.join(DELIVER_AS)}")
        return self._host.send_message(
            self.name, content, custom_type.strip(), deliver_as, bool(trigger_turn)
        )

    def register_command(self, name: str, handler: Handler, description: str = "") -> None:
        """Add `/name` to the app's commands (completion, palette, RPC `get_commands`).
        `handler(argument)` gets the text after the name; sync or async."""
        bare = name.removeprefix("/").strip().lower()
        if not COMMAND_NAME.match(bare):
            raise ValueError(
                f"command name {name!r}: use lowercase letters, digits, - and _ after the /"
            )
        if not callable(handler):
            raise TypeError("the handler must be callable")
        self._host.add_command(self.name, bare, handler, description.strip())

    def notify(self, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        """Show a line to the user (the transcript, stderr in print mode, a notice event).
        Raises `ExtensionStopped` when the extension is over its budget (`budget.py`)."""
        self._host.notify(self.name, text, level)
