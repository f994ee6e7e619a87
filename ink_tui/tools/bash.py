"""The `bash` tool: run a command in the workspace, keep the tail of its output."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterable
from typing import Any, Literal

from ink_tui.core.abort import AbortSignal
from ink_tui.core.tool_api import ToolContext, ToolError, ToolLimits, ToolResult
from ink_tui.tools.jobs import JobTable
from ink_tui.tools.orphans import reap_finished_groups
from ink_tui.tools.output_capture import CapturedOutput, TailCapture
from ink_tui.tools.process_group import (
    GroupProcess,
    kill_group_now,
    spawn_in_group,
    terminate_group,
)
from ink_tui.tools.shell_env import command_env, hidden_names
from ink_tui.tools.truncate import format_size

_DEFAULTS = ToolLimits()
# After the shell exits, how long background jobs that inherited the pipe may keep the
# output open before the result is returned without them.
_PIPE_GRACE = 0.5
# After the group is stopped, how long to drain what is left in the pipe.
_DRAIN_AFTER_STOP = 0.1

Outcome = Literal["exited", "timed_out", "interrupted"]


class BashTool:
    name = "bash"
    description = (
        "Run a command with `/bin/bash -c` in the workspace directory; stdin is empty and "
        "stderr is merged into stdout. Returns the output and the exit code (a non-zero "
        f"code is an error). Only the last {_DEFAULTS.max_lines} lines or "
        f"{format_size(_DEFAULTS.max_bytes)} of output are returned; when output is cut, "
        "the note names a file with all of it (read it with read, or grep it). "
        "`timeout` (seconds) kills the command and everything it started; there is no "
        "timeout by default, so give one for anything that might hang or wait. Background "
        "jobs (`cmd &`) that keep running should redirect their output to a file."
    )
    concurrency_safe = False

    def __init__(
        self,
        hide_env: Iterable[str] = (),
        pass_env: Iterable[str] = (),
        jobs: JobTable | None = None,
    ) -> None:
        """`hide_env`: variables holding API keys beyond the well-known ones (providers'
        `api_key_env`); `pass_env`: key variables to pass all the same (shell_env.py);
        `jobs`: the session's table its commands and what they leave belong to (default:
        one of its own)."""
        self._hidden_env = hidden_names(hide_env, pass_env)
        self.jobs = jobs if jobs is not None else JobTable()
        # Built per instance: the schema is a mutable dict handed to the scheduler.
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "command": {"type": "string", "minLength": 1, "description": "Bash command line."},
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Seconds before the command is killed (default: no limit).",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command: str = args["command"]
        timeout: float | None = args.get("timeout")
        if ctx.signal.aborted:
            return ToolResult.error(
                "interrupted before the command started", interrupted=True, exit_code=None
            )
        try:
            group = await spawn_in_group(
                command, ctx.workspace, command_env(self._hidden_env), jobs=self.jobs
            )
        except OSError as exc:
            raise ToolError(f"could not start {command!r}: {exc.strerror or exc}") from None
        capture = TailCapture(ctx.limits)
        finished = False
        try:
            outcome = await _supervise(group, self.jobs, capture, ctx.signal, timeout)
            finished = True
        finally:
            if not finished:
                # Cancelled from outside (or a bug): nothing the command started may
                # outlive the call, and there is no result to name the output file.
                kill_group_now(group.pgid, self.jobs)
                capture.discard()
            group.close_output()
            reap_finished_groups()
        return _result(group, capture.finish(), outcome, timeout, ctx.limits)


async def _supervise(
    group: GroupProcess,
    jobs: JobTable,
    capture: TailCapture,
    abort: AbortSignal,
    time_limit: float | None,
) -> Outcome:
    reader = asyncio.create_task(_pump(group.output, capture))
    exited = asyncio.create_task(group.process.wait())
    aborted = asyncio.create_task(abort.wait())
    try:
        done, _ = await asyncio.wait(
            {exited, aborted}, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED
        )
        if exited in done:
            # Jobs the shell left in the background may hold the pipe open for ever.
            await asyncio.wait({reader}, timeout=_PIPE_GRACE)
            return "exited"
        outcome: Outcome = "interrupted" if aborted in done else "timed_out"
        await terminate_group(group.process, jobs)
        await asyncio.wait({reader}, timeout=_DRAIN_AFTER_STOP)
        return outcome
    finally:
        for task in (reader, exited, aborted):
            task.cancel()
        await asyncio.gather(reader, exited, aborted, return_exceptions=True)


async def _pump(stream: asyncio.StreamReader, capture: TailCapture) -> None:
    while chunk := await stream.read(65536):
        capture.feed(chunk)


def _result(
    group: GroupProcess,
    output: CapturedOutput,
    outcome: Outcome,
    timeout: float | None,
    limits: ToolLimits,
) -> ToolResult:
    cut = output.cut
    parts = [cut.text if cut.lines else "(no output)"]
    if output.truncated:
        if cut.line_cut:
            shown = f"last {format_size(len(cut.text.encode('utf-8')))} of the last line"
        else:
            shown = f"last {len(cut.lines)} of {output.total_lines} lines"
            if cut.by_bytes:
                shown += f" ({format_size(limits.max_bytes)} limit)"
        parts.append(f"[output cut: showing {shown}; full output in {output.full_output_path}]")
    returncode = group.process.returncode
    code = _shell_code(returncode)
    if outcome == "timed_out":
        parts.append(f"timed out after {timeout:g} s; process group killed")
    elif outcome == "interrupted":
        parts.append("interrupted; process group terminated")
    else:
        parts.append(_exit_line(returncode))
    details: dict[str, Any] = {
        "exit_code": code,
        "full_output_path": output.full_output_path,
        "truncated": output.truncated,
        "timed_out": outcome == "timed_out",
        "interrupted": outcome == "interrupted",
        "lines": output.total_lines,
        "bytes": output.total_bytes,
        # Output lines in the result, for summaries (the notes are not counted).
        "shown": len(cut.lines),
        "total": output.total_lines,
        "pgid": group.pgid,
    }
    is_error = outcome != "exited" or code != 0
    return ToolResult("\n\n".join(parts), is_error=is_error, details=details)


def _shell_code(returncode: int | None) -> int | None:
    # The shell itself died of a signal: report it the way a shell would ($? = 128+n).
    if returncode is not None and returncode < 0:
        return 128 - returncode
    return returncode


def _exit_line(returncode: int | None) -> str:
    if returncode is None:
        return "exit code unknown"
    if returncode < 0:
        with contextlib.suppress(ValueError):
            name = signal.Signals(-returncode).name
            return f"exit code {128 - returncode} (killed by {name})"
    return f"exit code {_shell_code(returncode)}"
