"""Settings a run reads once, when it starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ink_tui.control.input_queue import TakeMode
from ink_tui.core.loop_config import LoopConfig
from ink_tui.core.tool_api import ToolLimits


@dataclass(slots=True)
class RunSettings:
    # Steering: every queued steer at once by default, so corrections arrive together.
    steering_mode: TakeMode = "all"
    # Follow-ups: one at a time by default, each answered before the next goes in.
    follow_up_mode: TakeMode = "one-at-a-time"
    # What an interrupt does with queued input: put it back into the editor (restore),
    # leave it queued but paused until the user resumes it (keep), or run it next (send).
    interrupt_queue: Literal["restore", "keep", "send"] = "restore"
    loop: LoopConfig = field(default_factory=LoopConfig)
    limits: ToolLimits = field(default_factory=ToolLimits)
    # Variables bash commands run without, besides the well-known API keys (providers'
    # `api_key_env`), and key variables they get all the same: see tools/shell_env.py.
    hide_env: tuple[str, ...] = ()
    pass_env: tuple[str, ...] = ()
    # Approvals (control/approvals.py): "auto" here, so a program that never answers
    # questions is never stuck; the config's "ask" is applied by the TUI and print mode.
    approval: str = "auto"
    # Rules that allow without asking ("bash:pytest", "edit"), from every config file.
    approval_allow: tuple[str, ...] = ()
    # Sub-agents (`task` calls, control/subagents.py): how many of one reply run at
    # once, and how deep they may nest (1: only the top-level agent starts them).
    subagents_max_parallel: int = 4
    subagents_max_depth: int = 1
    # Checkpoints of the files before tool batches that may change them (session/recording.py).
    checkpoints: bool = True
