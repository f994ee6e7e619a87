"""RPC mode: a real `ink --mode rpc` process driven by `RpcClient` over its pipes,
against the loopback scripted server."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ink_tui.rpc_client import RpcClient, RpcError
from tests.process_markers import new_marker, wait_gone
from tests.rpc_process import isolated_env, rpc_argv, scripted_args, spawn_rpc
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, error_reply, text_reply, tool_reply


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


@pytest.fixture
async def ink(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> AsyncIterator[RpcClient]:
    async with spawn_rpc(server, workspace, env) as client:
        yield client


async def test_prompt_streams_events_and_settles(ink: RpcClient, server: ScriptedServer) -> None:
    server.push(text_reply("Hello from rpc"))
    assert await ink.command("prompt", message="hi") == {"started": True}
    settled = await ink.wait_settled()
    assert settled["stop_reason"] == "completed"
    types = [e["type"] for e in ink.seen]
    assert types.count("agent_settled") == 1
    assert "".join(e["delta"]["text"] for e in ink.seen if e["type"] == "message_update") == (
        "Hello from rpc"
    )
    seqs = [e["seq"] for e in ink.seen]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    state = await ink.command("get_state")
    assert state["busy"] is False and state["message_count"] == 2
    assert state["model"] == "scripted-model" and state["session_file"]


async def test_busy_prompt_is_refused_and_queued_input_reaches_the_model(
    ink: RpcClient, server: ScriptedServer
) -> None:
    gate = Gate()
    server.push(tool_reply([("read", {"path": "README.md"})], gate=gate), text_reply("done"))
    await ink.command("prompt", message="read it")
    await wait_gate(gate)
    with pytest.raises(RpcError, match="busy"):
        await ink.command("prompt", message="another task")
    queued = await ink.command("prompt", message="keep the API", deliver_as="steer")
    assert queued["queued"]["mode"] == "steer"
    follow = await ink.command("follow_up", message="then run tests")
    assert [e["text"] for e in (await ink.command("get_queue"))["entries"]] == [
        "keep the API",
        "then run tests",
    ]
    server.push(text_reply("tests ran"))
    gate.open()
    await ink.wait_settled()
    assert user_texts(server.requests[1])[-1] == "keep the API"
    assert user_texts(server.requests[2])[-1] == "then run tests"
    assert follow["queued"]["mode"] == "follow_up"


async def test_queue_commands_and_their_errors(ink: RpcClient, server: ScriptedServer) -> None:
    gate = Gate()
    server.push(text_reply("long", gate=gate), text_reply("after"))
    await ink.command("prompt", message="go")
    await wait_gate(gate)
    a = (await ink.command("steer", message="A"))["queued"]
    b = (await ink.command("follow_up", message="B"))["queued"]
    await ink.command("edit_queue_entry", entry_id=a["id"], text="A2", mode="follow_up")
    moved = await ink.command("move_queue_entry", entry_id=b["id"], to=0)
    assert [(e["text"], e["mode"]) for e in moved["entries"]] == [
        ("B", "follow_up"),
        ("A2", "follow_up"),
    ]
    removed = await ink.command("remove_queue_entry", entry_id=a["id"])
    assert removed["removed"]["text"] == "A2"
    with pytest.raises(RpcError, match="no queued entry"):
        await ink.command("remove_queue_entry", entry_id=a["id"])
    with pytest.raises(RpcError, match="entry_id"):
        await ink.command("edit_queue_entry", entry_id="x", text="y")
    with pytest.raises(RpcError, match="mode"):
        await ink.command("edit_queue_entry", entry_id=b["id"], mode="later")
    with pytest.raises(RpcError, match="to"):
        await ink.command("move_queue_entry", entry_id=b["id"])
    # Cleared before the abort: nothing comes back.
    cleared = await ink.command("clear_queue")
    assert [e["text"] for e in cleared["removed"]] == ["B"]
    aborted = await ink.command("abort")
    assert aborted["stop_reason"] == "aborted" and aborted["restored_count"] == 0
    assert not [e for e in ink.seen if e["type"] == "input_restored"]


async def test_bad_lines_get_error_responses_and_the_session_goes_on(
    ink: RpcClient, server: ScriptedServer
) -> None:
    await ink.send_raw("this is not json\n")
    await ink.send_raw('{"type": "prompt", "message": 5, "id": "p1"}\r\n')
    await ink.send_raw('["a list"]\n')
    await ink.send_raw('{"type": "fly", "id": "f"}\n')
    errors = []
    for _ in range(4):
        errors.append(await ink.wait_for(lambda e: e["type"] == "response", after=len(errors)))
    # Responses without a matching waiter are kept as events, in order.
    by_command = [(e["command"], e["success"]) for e in errors]
    assert by_command == [("parse", False), ("prompt", False), ("parse", False), ("fly", False)]
    assert "must be a string" in errors[1]["error"] and errors[1]["id"] == "p1"
    server.push(text_reply("still here"))
    await ink.command("prompt", message="a line with \u2028 inside")
    await ink.wait_settled()
    assert user_texts(server.requests[0]) == ["a line with \u2028 inside"]


async def test_abort_during_bash_kills_it_and_restores_the_queue(
    ink: RpcClient, server: ScriptedServer
) -> None:
    marker = new_marker()  # unique to this run: suites may run side by side
    server.push(tool_reply([("bash", {"command": f"sleep {marker}"})]))
    await ink.command("prompt", message="run it")
    await ink.wait_for(lambda e: e["type"] == "tool_execution_start")
    await ink.command("follow_up", message="F1")
    result = await ink.command("abort")
    assert result["stop_reason"] == "aborted"
    assert result["restored_text"] == "F1"
    restored = await ink.wait_for(lambda e: e["type"] == "input_restored")
    assert restored["text"] == "F1"
    assert not wait_gone([marker])


async def test_wait_settled_hands_out_each_prompts_settle_in_turn(
    ink: RpcClient, server: ScriptedServer
) -> None:
    server.push(text_reply("one"), text_reply("two"))
    await ink.command("prompt", message="first")
    first = await ink.wait_settled()
    await ink.command("prompt", message="second")
    second = await ink.wait_settled()
    assert second["seq"] > first["seq"]
    assert second["run_id"] is None and first["stop_reason"] == second["stop_reason"]
    starts = [e for e in ink.seen if e["type"] == "agent_start"]
    assert [e["prompt"] for e in starts] == ["first", "second"]


async def test_retry_then_success_settles_once_with_two_agent_ends(
    ink: RpcClient, server: ScriptedServer
) -> None:
    server.push(error_reply(503, "overloaded", headers={"Retry-After": "0"}), text_reply("ok"))
    await ink.command("prompt", message="go")
    await ink.wait_settled()
    assert [e["will_retry"] for e in ink.seen if e["type"] == "agent_end"] == [True, False]
    assert [e["type"] for e in ink.seen].count("agent_settled") == 1


async def test_bash_command_and_session_switching(
    ink: RpcClient, server: ScriptedServer, workspace: Path
) -> None:
    ran = await ink.command("bash", command="echo from-the-shell")
    assert "from-the-shell" in ran["output"] and ran["is_error"] is False
    server.push(text_reply("one"))
    mark = len(ink.seen)
    await ink.command("prompt", message="first session")
    await ink.wait_settled(after=mark)
    first = (await ink.command("get_state"))["session_id"]
    fresh = await ink.command("new_session")
    assert fresh["session_id"] != first
    assert (await ink.command("get_messages"))["messages"] == []
    back = await ink.command("switch_session", session_id=first[:6])
    assert back["session_id"] == first and back["message_count"] == 2
    messages = (await ink.command("get_messages"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    with pytest.raises(RpcError, match="no session id"):
        await ink.command("switch_session", session_id="zzzz")
    names = {c["name"] for c in (await ink.command("get_commands"))["commands"]}
    assert {"prompt", "abort", "clear_queue", "switch_session"} <= names


async def test_stdin_eof_aborts_settles_and_exits_zero(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(text_reply("never finished", gate=gate))
    client = await RpcClient.spawn(scripted_args(server, model="m"), cwd=workspace, env=env)
    await client.command("prompt", message="go")
    await wait_gate(gate)
    assert await client.close() == 0
    assert client.seen[-1]["type"] == "agent_settled"
    assert client.seen[-1]["stop_reason"] == "aborted"
    assert await asyncio.to_thread(server.disconnected.wait, 2)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]
)
async def test_signals_abort_settle_and_exit_with_their_code(
    server: ScriptedServer, workspace: Path, env: dict[str, str], signum: int, code: int
) -> None:
    gate = Gate()
    server.push(text_reply("never finished", gate=gate))
    client = await RpcClient.spawn(scripted_args(server, model="m"), cwd=workspace, env=env)
    try:
        await client.command("prompt", message="go")
        await wait_gate(gate)
        client.process.send_signal(signum)
        assert await asyncio.wait_for(client.process.wait(), 10) == code
    finally:
        await client.close()
    assert client.seen[-1]["type"] == "agent_settled"


async def test_stdout_holds_protocol_lines_only_and_the_session_resumes_in_ink_c(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(text_reply("recorded"))
    commands = json.dumps({"type": "prompt", "message": "save me", "id": "1"}) + "\n"
    args = scripted_args(server, model="m")
    process = await asyncio.create_subprocess_exec(
        *rpc_argv(*args),
        cwd=workspace, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    # Keep stdin open until the prompt has settled, then close it.
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(commands.encode())
    lines = []
    while line := await asyncio.wait_for(process.stdout.readline(), 10):
        lines.append(json.loads(line))
        if lines[-1]["type"] == "agent_settled":
            process.stdin.close()
    assert await process.wait() == 0
    assert all("type" in line for line in lines)
    server.push(text_reply("resumed"))
    again = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ink_tui", "-c", "-p", "and now?", *args,
        cwd=workspace, env=env, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await again.communicate()
    assert user_texts(server.requests[-1]) == ["save me", "and now?"]
    assert out.decode().strip() == "resumed"


async def test_a_model_that_cannot_be_used_is_refused_never_the_demo(
    workspace: Path, env: dict[str, str]
) -> None:
    client = await RpcClient.spawn(["--model", "gpt-nothing"], cwd=workspace, env=env)
    assert await client.close() == 2
    start = client.seen[0]
    assert start["command"] == "start" and start["success"] is False
    assert "cannot be used" in start["error"]
