"""The `task` tool: hand a piece of work to a sub-agent and get its final answer back.

The sub-agent starts with a fresh history (none of this conversation), in the same
workspace, with the same model, approval gate and tools (less `task` once `max_depth`
is reached), its own iteration limit and compaction. Running it is the controller's
business (control/subagents.py): this module is the tool's face to the model, and a
`TaskRunner` the controller binds. Several `task` calls of one reply run side by side,
up to `max_parallel` (slots of their own, not the read-only tools').
"""

from __future__ import annotations

from typing import Any, Protocol

from ink_tui.core.tool_api import ToolContext, ToolError, ToolResult

DEFAULT_MAX_PARALLEL = 4
DEFAULT_MAX_DEPTH = 1


class TaskRunner(Protocol):
    """Runs one sub-agent for a `task` call and returns the call's result."""

    async def __call__(
        self, tool: TaskTool, description: str, prompt: str, ctx: ToolContext
    ) -> ToolResult: ...


class TaskTool:
    name = "task"
    description = (
        "Delegate a self-contained piece of work to a sub-agent, which works on it alone "
        "and returns its final answer as this call's result.\n"
        "The sub-agent does not see this conversation: `prompt` must say everything it "
        "needs (what to do, where, what to report back). It has the same workspace and "
        "tools. Several task calls in one reply run in parallel; use them for independent "
        "pieces of work (searching different areas, investigating separate questions)."
    )
    concurrency_safe = True

    def __init__(
        self,
        runner: TaskRunner | None = None,
        *,
        max_parallel: int = DEFAULT_MAX_PARALLEL,
        depth: int = 0,
        agent_id: str | None = None,
    ) -> None:
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "A short label for the task (3-7 words), shown to the user",
                },
                "prompt": {
                    "type": "string",
                    "description": "The whole instruction for the sub-agent",
                },
            },
            "required": ["description", "prompt"],
            "additionalProperties": False,
        }
        # Bound by the controller that offers the tool (RunController binds its own).
        self.runner = runner
        self.max_parallel = max_parallel
        # The depth of the agent that calls it (0: the top-level agent) and its id.
        self.depth = depth
        self.agent_id = agent_id

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        description = " ".join(str(args["description"]).split())
        prompt = str(args["prompt"])
        if not description:
            raise ToolError("`description` is empty: give the task a short label.")
        if not prompt.strip():
            raise ToolError("`prompt` is empty: say what the sub-agent should do.")
        if self.runner is None:
            raise ToolError("Sub-agents are not available in this session.")
        return await self.runner(self, description, prompt, ctx)
