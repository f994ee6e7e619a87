"""`ink acp`: a real process driven by the ACP SDK's client side, against the scripted
server: initialize, prompts and their tool calls, permissions, modes, load."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.helpers import text_block

from tests.acp_client import spawn_acp
from tests.rpc_process import isolated_env
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


async def test_initialize_is_honest(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    async with spawn_acp(server, workspace, env) as acp:
        hello = await acp.conn.initialize(protocol_version=1)
        caps = hello.agent_capabilities
        assert hello.protocol_version == 1 and caps is not None
        assert caps.load_session is True
        assert caps.prompt_capabilities is not None
        assert caps.prompt_capabilities.embedded_context is True
        assert caps.prompt_capabilities.image is False
        assert caps.mcp_capabilities is not None and caps.mcp_capabilities.http is False
        assert hello.field_meta is not None
        assert hello.field_meta["steering"] == {"supported": True}
        assert hello.field_meta["ink"]["runControl"]["deliverAs"] == ["steer", "follow_up"]


async def test_new_session_modes_and_commands(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    async with spawn_acp(server, workspace, env) as acp:
        await acp.conn.initialize(protocol_version=1)
        created = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert created.modes is not None and created.modes.current_mode_id == "ask"
        assert [m.id for m in created.modes.available_modes] == ["ask", "edits", "auto"]
        (commands,) = await acp.client.wait_for(lambda: acp.client.of("available_commands_update"))
        assert "compact" in [c.name for c in commands.available_commands]


async def test_prompt_with_a_tool_call_and_its_update(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(
        tool_reply([("read", {"path": "README.md"})], text="Looking."),
        text_reply("It is a sample."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        answer = await acp.conn.prompt(session_id=session, prompt=[text_block("what is it?")])
        assert answer.stop_reason == "end_turn"
        client = acp.client
        assert client.text() == "Looking.It is a sample."
        (start,) = client.of("tool_call")
        assert start.tool_call_id == "call_0_read" and start.kind == "read"
        assert start.title == "Read README.md" and start.status == "pending"
        assert start.locations[0].path == str(workspace / "README.md")
        updates = [u for u in client.of("tool_call_update") if u.tool_call_id == "call_0_read"]
        assert [u.status for u in updates] == ["in_progress", "completed"]
        assert "A tiny project" in updates[-1].content[0].content.text
        assert answer.usage is not None and answer.usage.input_tokens > 0


async def test_embedded_context_reaches_the_model(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    from acp.helpers import embedded_text_resource, resource_block

    server.push(text_reply("seen"))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        resource = embedded_text_resource(f"file://{workspace}/sum.py", "def total(xs): ...")
        await acp.conn.prompt(
            session_id=session, prompt=[text_block("explain"), resource_block(resource)]
        )
    sent = server.requests[0]["messages"][-1]["content"]
    assert "explain" in sent and "def total(xs): ..." in sent and "sum.py" in sent


async def test_a_prompt_while_busy_without_meta_is_refused(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(text_reply("slow answer", gate=gate))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("go")])
        )
        await wait_gate(gate)
        with pytest.raises(RequestError) as refused:
            await acp.conn.prompt(session_id=session, prompt=[text_block("another")])
        assert "deliverAs" in str(refused.value.data)
        gate.open()
        assert (await running).stop_reason == "end_turn"


async def test_a_denied_permission_keeps_the_command_from_running(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(
        tool_reply([("bash", {"command": "touch created.txt"})]),
        text_reply("I was not allowed."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        acp.client.answer = lambda question: "deny"
        session = await acp.start(workspace)
        answer = await acp.conn.prompt(session_id=session, prompt=[text_block("make a file")])
        assert answer.stop_reason == "end_turn"
        (question,) = acp.client.questions
        assert question.tool_call.tool_call_id == "call_0_bash"
        assert question.tool_call.title == "touch created.txt"
        kinds = {o.option_id: o.kind for o in question.options}
        assert kinds["allow"] == "allow_once" and kinds["deny"] == "reject_once"
        assert question.meta["ink"]["requestId"].startswith("approval-")
        updates = [u for u in acp.client.of("tool_call_update") if u.tool_call_id == "call_0_bash"]
        assert updates[-1].status == "failed"
        assert "in_progress" not in [u.status for u in updates]
    assert not (workspace / "created.txt").exists()
    denial = server.requests[1]["messages"][-1]
    assert denial["role"] == "tool" and "denied" in denial["content"].lower()


async def test_a_cancelled_permission_is_a_denial(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(
        tool_reply([("bash", {"command": "touch created.txt"})]),
        text_reply("Not allowed."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        acp.client.answer = lambda question: None
        session = await acp.start(workspace)
        await acp.conn.prompt(session_id=session, prompt=[text_block("make a file")])
        assert len(acp.client.questions) == 1
    assert not (workspace / "created.txt").exists()


async def test_an_allowed_write_shows_its_diff(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    new = "def total(xs):\n    return sum(xs, 0)\n"
    server.push(
        tool_reply([("write", {"path": "sum.py", "content": new})]),
        text_reply("Written."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        await acp.conn.prompt(session_id=session, prompt=[text_block("fix it")])
        (question,) = acp.client.questions
        assert question.tool_call.content is not None
        (proposed,) = question.tool_call.content
        assert proposed.type == "diff" and proposed.new_text == new
        assert proposed.old_text == "def total(xs):\n    return sum(xs)\n"
        done = [u for u in acp.client.of("tool_call_update") if u.status == "completed"]
        (diff,) = done[-1].content
        assert diff.type == "diff" and diff.path == str(workspace / "sum.py")
        assert diff.old_text == "def total(xs):\n    return sum(xs)\n" and diff.new_text == new
    assert (workspace / "sum.py").read_text() == new


async def test_set_mode_changes_the_approval_policy(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(
        tool_reply([("bash", {"command": "touch created.txt"})]),
        text_reply("Done."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        await acp.conn.set_session_mode(session_id=session, mode_id="auto")
        (mode,) = await acp.client.wait_for(lambda: acp.client.of("current_mode_update"))
        assert mode.current_mode_id == "auto"
        await acp.conn.prompt(session_id=session, prompt=[text_block("make a file")])
        assert acp.client.questions == []
        with pytest.raises(RequestError):
            await acp.conn.set_session_mode(session_id=session, mode_id="yolo")
    assert (workspace / "created.txt").exists()


async def test_load_replays_a_saved_session(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(
        tool_reply([("read", {"path": "README.md"})]),
        text_reply("A sample project."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        await acp.conn.prompt(session_id=session, prompt=[text_block("what is this?")])
    server.push(text_reply("Still a sample."))
    async with spawn_acp(server, workspace, env) as acp:
        await acp.conn.initialize(protocol_version=1)
        loaded = await acp.conn.load_session(cwd=str(workspace), session_id=session, mcp_servers=[])
        assert loaded is not None and loaded.modes is not None
        client = acp.client
        kinds = [u.session_update for _, u in client.updates]
        replayed = [k for k in kinds if k != "available_commands_update"]
        assert replayed == [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk",
        ]
        assert client.of("user_message_chunk")[0].content.text == "what is this?"
        assert client.of("tool_call_update")[0].status == "completed"
        assert client.text() == "A sample project."
        # The conversation goes on from there.
        await acp.conn.prompt(session_id=session, prompt=[text_block("and now?")])
    texts = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert texts == ["what is this?", "and now?"]


async def test_load_of_an_unknown_session_is_an_error(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    async with spawn_acp(server, workspace, env) as acp:
        await acp.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError):
            await acp.conn.load_session(cwd=str(workspace), session_id="nope", mcp_servers=[])


async def test_usage_update_when_the_window_is_known(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.models_listing = {"data": [{"id": "scripted-model", "context_length": 8192}]}
    server.push(text_reply("short"))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        await acp.conn.prompt(session_id=session, prompt=[text_block("hi")])
        (usage,) = acp.client.of("usage_update")
        # The scripted server reports 10 prompt and 5 completion tokens.
        assert usage.size == 8192 and usage.used == 15


async def test_stdout_holds_protocol_lines_only(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    import json
    import sys

    from tests.rpc_process import scripted_args

    server.push(text_reply("recorded"))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ink_tui", "acp", *scripted_args(server),
        cwd=workspace, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(workspace), "mcpServers": []},
        },
    ]
    for request in requests:
        process.stdin.write((json.dumps(request) + "\n").encode())
    lines: list[dict[str, Any]] = []
    while not any(line.get("id") == 2 for line in lines):
        lines.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 30)))
    session = next(line for line in lines if line.get("id") == 2)["result"]["sessionId"]
    prompt = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]},
    }
    process.stdin.write((json.dumps(prompt) + "\n").encode())
    while not any(line.get("id") == 3 for line in lines):
        lines.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 30)))
    process.stdin.close()
    rest, _ = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0
    lines += [json.loads(line) for line in rest.splitlines()]
    assert all(line["jsonrpc"] == "2.0" for line in lines)
    assert next(line for line in lines if line.get("id") == 3)["result"]["stopReason"] == "end_turn"
    # Recorded as the TUI records its sessions.
    files = await asyncio.to_thread(lambda: list(Path(env["XDG_DATA_HOME"]).rglob("*.jsonl")))
    assert any(session in path.name for path in files)


async def test_the_compact_command(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(text_reply("A long answer " * 50))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        await acp.conn.prompt(session_id=session, prompt=[text_block("tell me a lot " * 30)])
        server.push(text_reply("Goal: short."))
        answer = await acp.conn.prompt(
            session_id=session, prompt=[text_block("/compact keep the goal")]
        )
        assert answer.stop_reason == "end_turn"
    assert len(server.requests) == 2
    assert "keep the goal" in str(server.requests[1])
