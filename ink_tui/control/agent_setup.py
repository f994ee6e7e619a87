"""What every agent loop of one controller is made from, and the gate its calls pass.

The top-level run (control/controller.py) and each sub-agent (control/subagents.py)
build their loops from the same parts: the controller's provider (which /model may
swap), tools, workspace, settings and system prompt. A model's call passes the same
gate in both: the extensions' checks in `before_tool`, then the approval question last,
so a call an extension blocks is never asked about; a sub-agent's question names it.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Protocol

from ink_tui.control.approvals import AgentTag, Approvals
from ink_tui.control.checkpointing import Checkpoints
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.abort import AbortSignal
from ink_tui.core.provider_api import Provider
from ink_tui.core.tool_api import BeforeTool, Tool, ToolContext


class AgentSetup(Protocol):
    """The parts a loop is built from (the run controller has them all)."""

    provider: Provider
    tools: list[Tool]
    workspace: Path
    system_prompt: str
    settings: RunSettings
    before_tool: list[BeforeTool]
    approvals: Approvals
    checkpoints: Checkpoints


def tool_context(
    setup: AgentSetup,
    signal: AbortSignal,
    *,
    checked: bool = True,
    agent: AgentTag | None = None,
) -> ToolContext:
    """The context a loop's tools run in. `checked=False` (the user's own `!` lines)
    passes no gate: only what the model asks for is checked."""
    gate: tuple[BeforeTool, ...] = ()
    if checked:
        # Two statements: mypy 1.11 (the floor) joins the conditional's two types to `object`.
        ask: BeforeTool = setup.approvals.check
        if agent is not None:
            ask = partial(setup.approvals.check, agent=agent)
        gate = (*setup.before_tool, ask)
    return ToolContext(
        workspace=setup.workspace,
        signal=signal,
        limits=setup.settings.limits,
        before_tool=gate,
        # The top-level run's model calls only: see control/checkpointing.py.
        before_batch=setup.checkpoints.before_batch if checked and agent is None else None,
    )
