"""What a tool is, as the loop and scheduler see it.

A tool validates nothing itself: the scheduler checks arguments against `parameters`
(JSON schema) before `execute` runs. A tool reports a problem the model can fix by
raising `ToolError`; any other exception becomes an error result naming the exception.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ink_tui.core.abort import AbortSignal
from ink_tui.core.messages import ToolCall

# A check run before a validated call executes (an extension's guard; later the user's
# approval): it gets the call and the run's abort signal and returns None to let the
# call run or a reason, which the model receives as the call's error result. It may
# take its time (ask someone); an abort meanwhile stops the wait.
BeforeTool = Callable[[ToolCall, AbortSignal], Awaitable[str | None]]
# Run before a batch of calls that may change files, with the calls and the signal.
BeforeBatch = Callable[[Sequence[ToolCall], AbortSignal], Awaitable[None]]


def changes_files(tool: object) -> bool:
    """Whether a tool's calls may change files: all but those marked `read_only` (an
    extension's tool is taken to change them unless it says it does not)."""
    return not getattr(tool, "read_only", False)


class ToolError(Exception):
    """A failure to report to the model as an error result, worded for it to act on."""


@dataclass(slots=True)
class ToolLimits:
    """Output caps. `read` keeps the head, `bash` keeps the tail."""

    max_lines: int = 2000
    max_bytes: int = 50 * 1024
    # Caps on listing tools (ls, grep, find): entries or matching lines.
    max_entries: int = 500


@dataclass(slots=True)
class ToolContext:
    workspace: Path
    signal: AbortSignal
    limits: ToolLimits = field(default_factory=ToolLimits)
    # Checked in order before each call runs; the first reason blocks it.
    before_tool: Sequence[BeforeTool] = ()
    # The id of the call being executed (set by the scheduler for each call's own copy):
    # a `task` call names the sub-agent's events after it.
    call_id: str | None = None
    # Awaited before a batch of calls any of which may change files (a tool that is not
    # `read_only`): the workspace's checkpoint (control/checkpointing.py). It must not
    # raise but AbortError.
    before_batch: BeforeBatch | None = None


@dataclass(slots=True)
class ToolResult:
    # What the model reads.
    content: str
    is_error: bool = False
    # Display-only facts for the UI and print mode (a diff, exit code, the path of the
    # full output, how much was cut). Never sent to the model.
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def error(cls, message: str, **details: Any) -> ToolResult:
        return cls(content=message, is_error=True, details=dict(details))


class Tool(Protocol):
    name: str
    description: str
    # JSON schema of the arguments object.
    parameters: dict[str, Any]
    # True for tools whose calls may run next to each other (read, ls, grep, find;
    # task). They share the scheduler's slots, unless the tool has a `max_parallel`
    # attribute (an int, read with getattr): its calls then take slots of their own.
    concurrency_safe: bool
    # Optional (read with getattr, see `changes_files`): True for a tool that never
    # changes a file (read, ls, grep, find): no checkpoint is taken before its calls.

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the provider advertises to the model for one tool."""

    name: str
    description: str
    parameters: dict[str, Any]


def spec_of(tool: Tool) -> ToolSpec:
    return ToolSpec(tool.name, tool.description, tool.parameters)
