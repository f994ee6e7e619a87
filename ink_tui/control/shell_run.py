"""A `!` line: run locally in the workspace shell with the bash tool, never sent to the
model, and never checked by extensions or approvals (only what the model asks for is)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ink_tui.core.events import Event
from ink_tui.core.messages import ToolCall
from ink_tui.core.scheduler import ToolScheduler
from ink_tui.core.tool_api import Tool, ToolContext


async def run_shell_line(
    line: str,
    call_id: str,
    tools: Sequence[Tool],
    ctx: ToolContext,
    emit: Callable[[Event], None],
) -> None:
    """Run `line` (with its `!`) as a bash call; its tool events go to `emit`."""
    shell_tools = [tool for tool in tools if tool.name == "bash"]
    scheduler = ToolScheduler(shell_tools, ctx, emit)
    call = ToolCall(id=call_id, name="bash", arguments={"command": line[1:].strip()})
    await scheduler.run([call])
