"""RPC `bash`: each command answers with its own output and exit code, through a real
`ink --mode rpc` process.

A shell line that must still be running when the next command arrives waits on a fifo
the test writes to only once that command was sent and read: no sleep decides.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.rpc_client import RpcClient
from tests.scripted_server import ScriptedServer, text_reply, tool_reply

WITHIN = 30.0


@pytest.fixture
async def ink(server: ScriptedServer, workspace: Path, tmp_path: Path) -> AsyncIterator[RpcClient]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INK_", "OPENAI_", "XDG_")) and k != "HOME"
    }
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    args = ["--base-url", server.base_url, "--model", "scripted-model", "--api-key", "k"]
    async with RpcClient.spawn(args, cwd=workspace, env=env) as client:
        yield client


def held_line(fifo: Path, then: str) -> str:
    """A shell line that waits until `release(fifo)`, then runs `then`."""
    return f"read -r _ < {fifo.name}; {then}"


async def release(fifo: Path) -> None:
    def write() -> None:
        # Opening for writing waits until the shell has opened it for reading.
        with open(fifo, "w") as end:
            end.write("go\n")

    await asyncio.wait_for(asyncio.to_thread(write), WITHIN)


def make_fifo(workspace: Path) -> Path:
    fifo = workspace / "release.fifo"
    os.mkfifo(fifo)
    return fifo


async def test_two_bash_commands_back_to_back_answer_their_own_output(
    ink: RpcClient, workspace: Path
) -> None:
    fifo = make_fifo(workspace)
    # Tasks start in the order they were made: the three lines go out in this order.
    first = asyncio.ensure_future(ink.command("bash", command=held_line(fifo, "echo ONE; exit 3")))
    second = asyncio.ensure_future(ink.command("bash", command="echo TWO"))
    # Answered once ink has read both bash lines and set them going.
    probe = asyncio.ensure_future(ink.command("get_state"))
    await asyncio.wait_for(probe, WITHIN)
    assert not first.done() and not second.done()
    await release(fifo)
    one: dict[str, Any] = await asyncio.wait_for(first, WITHIN)
    two: dict[str, Any] = await asyncio.wait_for(second, WITHIN)

    assert "ONE" in one["output"] and "TWO" not in one["output"]
    assert one["exit_code"] == 3 and one["is_error"] is True
    assert one["stop_reason"] == "completed"
    assert "TWO" in two["output"] and "ONE" not in two["output"]
    assert two["exit_code"] == 0 and two["is_error"] is False
    # The second waited for the first: they ran one after the other, in order.
    ends = [e for e in ink.seen if e["type"] == "tool_execution_end"]
    assert ["ONE" in ends[0]["content"], "TWO" in ends[1]["content"]] == [True, True]
    starts = [e for e in ink.seen if e["type"] == "agent_start"]
    assert [e["kind"] for e in starts] == ["shell", "shell"]
    assert starts[0]["run_id"] != starts[1]["run_id"]


async def test_bash_answer_leaves_out_the_queued_run_after_it(
    ink: RpcClient, server: ScriptedServer, workspace: Path
) -> None:
    """A follow-up queued while the shell line runs goes on in the same busy stretch;
    its model's bash output is its own, not the shell line's answer."""
    fifo = make_fifo(workspace)
    server.push(tool_reply([("bash", {"command": "echo FROM-MODEL"})]), text_reply("done"))
    held = asyncio.ensure_future(ink.command("bash", command=held_line(fifo, "echo MINE")))
    await ink.wait_for(lambda e: e["type"] == "tool_execution_start", within=WITHIN)
    queued = await ink.command("follow_up", message="now the model")
    assert queued["queued"]["mode"] == "follow_up"
    await release(fifo)
    answer = await asyncio.wait_for(held, WITHIN)
    assert "MINE" in answer["output"] and "FROM-MODEL" not in answer["output"]
    assert answer["exit_code"] == 0 and answer["stop_reason"] == "completed"
    settled = await ink.wait_settled(within=WITHIN)
    assert settled["stop_reason"] == "completed"
    model_end = [e for e in ink.seen if e["type"] == "tool_execution_end"][-1]
    assert "FROM-MODEL" in model_end["content"]  # nothing lost: it came as events


async def test_abort_stops_the_running_bash_and_calls_off_the_waiting_one(
    ink: RpcClient, workspace: Path
) -> None:
    fifo = make_fifo(workspace)
    ran = workspace / "second-ran"
    first = asyncio.ensure_future(ink.command("bash", command=held_line(fifo, "echo ONE")))
    second = asyncio.ensure_future(ink.command("bash", command=f"touch {ran.name}"))
    await ink.wait_for(lambda e: e["type"] == "tool_execution_start", within=WITHIN)
    aborted = await asyncio.wait_for(ink.command("abort"), WITHIN)
    assert aborted["aborted"] is True
    one = await asyncio.wait_for(first, WITHIN)
    two = await asyncio.wait_for(second, WITHIN)
    assert one["stop_reason"] == "aborted" and "ONE" not in one["output"]
    assert two["stop_reason"] == "aborted" and two["error"] == "aborted before it ran"
    # A later bash runs as usual.
    after = await asyncio.wait_for(ink.command("bash", command="echo AFTER"), WITHIN)
    assert "AFTER" in after["output"] and after["exit_code"] == 0
    assert not ran.exists()
