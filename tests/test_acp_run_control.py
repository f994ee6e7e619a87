"""`ink acp` run control: cancel during a stream and during a command, steering and
follow-ups sent as prompts while one runs (`_meta.ink.deliverAs`) or by the
`_session/steering` extension, the queue shown to the client, signals and stdin's end."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from acp.helpers import text_block

from tests.acp_client import WITHIN, spawn_acp
from tests.process_markers import kill_marked, new_marker, wait_alive, wait_gone
from tests.rpc_process import isolated_env
from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


async def test_cancel_during_a_stream_answers_cancelled(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(text_reply("a long answer that never ends", gate=gate))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("go")])
        )
        await wait_gate(gate)
        await acp.client.wait_for(lambda: acp.client.of("agent_message_chunk"))
        await acp.conn.cancel(session_id=session)
        answer = await asyncio.wait_for(running, WITHIN)
        assert answer.stop_reason == "cancelled"
        # The abort closed the HTTP stream.
        assert await asyncio.to_thread(server.disconnected.wait, WITHIN)
        # The session goes on after a cancel.
        server.push(text_reply("back"))
        again = await acp.conn.prompt(session_id=session, prompt=[text_block("again")])
        assert again.stop_reason == "end_turn"


async def test_cancel_during_a_command_leaves_no_process(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    marker = new_marker()
    command = f"sleep {marker}1 & sleep {marker}2"
    server.push(tool_reply([("bash", {"command": command})]))
    try:
        async with spawn_acp(server, workspace, env, "--approval", "auto") as acp:
            session = await acp.start(workspace)
            running = asyncio.ensure_future(
                acp.conn.prompt(session_id=session, prompt=[text_block("run it")])
            )
            await asyncio.to_thread(wait_alive, [f"{marker}1", f"{marker}2"])
            (start,) = acp.client.of("tool_call")
            assert start.kind == "execute" and start.title == command
            await acp.conn.cancel(session_id=session)
            answer = await asyncio.wait_for(running, WITHIN)
            assert answer.stop_reason == "cancelled"
            assert not await asyncio.to_thread(wait_gone, [f"{marker}1", f"{marker}2"], 10.0)
            ended = [u for u in acp.client.of("tool_call_update") if u.status == "failed"]
            assert ended and ended[-1].tool_call_id == "call_0_bash"
    finally:
        kill_marked(marker)


async def test_cancel_while_a_permission_is_open(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    server.push(tool_reply([("bash", {"command": "touch created.txt"})]))
    async with spawn_acp(server, workspace, env) as acp:
        acp.client.hold = asyncio.Event()
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("make it")])
        )
        await acp.client.wait_for(lambda: acp.client.questions)
        await acp.conn.cancel(session_id=session)
        answer = await asyncio.wait_for(running, WITHIN)
        assert answer.stop_reason == "cancelled"
        # The editor's late "allow" changes nothing.
        acp.client.hold.set()
    assert not (workspace / "created.txt").exists()


async def test_a_steer_sent_as_a_prompt_reaches_the_next_model_call(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("read", {"path": "README.md"})], gate=gate),
        text_reply("Kept the API."),
    )
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("read it")])
        )
        await wait_gate(gate)
        queued = await acp.conn.prompt(
            session_id=session,
            prompt=[text_block("keep the API")],
            ink={"deliverAs": "steer"},
        )
        assert queued.stop_reason == "end_turn"
        assert queued.field_meta is not None
        info = queued.field_meta["ink"]["queued"]
        assert info["mode"] == "steer" and isinstance(info["id"], int)
        # The queue is visible to the client (the SDK hands the method on without its `_`).
        notes = await acp.client.wait_for(
            lambda: [p for m, p in acp.client.notes if m == "ink/queue_update" and p["entries"]]
        )
        assert notes[0]["entries"] == [{"id": info["id"], "text": "keep the API", "mode": "steer"}]
        gate.open()
        answer = await asyncio.wait_for(running, WITHIN)
        assert answer.stop_reason == "end_turn"
        delivered = [u for u in acp.client.of("user_message_chunk") if u.field_meta is not None]
        assert delivered[0].content.text == "keep the API"
        assert delivered[0].field_meta["ink"]["deliveredAs"] == "steer"
        last_queue = [p for m, p in acp.client.notes if m == "ink/queue_update"][-1]
        assert last_queue["entries"] == []
    assert user_texts(server.requests[1])[-1] == "keep the API"


async def test_a_follow_up_runs_when_the_model_would_stop(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(text_reply("first answer", gate=gate), text_reply("tests ran"))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("go")])
        )
        await wait_gate(gate)
        queued = await acp.conn.prompt(
            session_id=session,
            prompt=[text_block("then run tests")],
            ink={"deliverAs": "queue"},  # the session/inject proposal's word for it
        )
        assert queued.field_meta is not None
        assert queued.field_meta["ink"]["queued"]["mode"] == "follow_up"
        gate.open()
        assert (await asyncio.wait_for(running, WITHIN)).stop_reason == "end_turn"
        assert acp.client.text() == "first answertests ran"
    assert user_texts(server.requests[1])[-1] == "then run tests"


async def test_the_steering_extension(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(tool_reply([("read", {"path": "README.md"})], gate=gate), text_reply("ok"))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        idle = await acp.conn.ext_method(
            "session/steering", {"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}
        )
        assert idle["outcome"] == "failed"
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("read it")])
        )
        await wait_gate(gate)
        steered = await acp.conn.ext_method(
            "session/steering",
            {"sessionId": session, "prompt": [{"type": "text", "text": "be brief"}]},
        )
        assert steered["outcome"] == "injected"
        gate.open()
        await asyncio.wait_for(running, WITHIN)
    assert user_texts(server.requests[1])[-1] == "be brief"


async def test_queued_input_comes_back_after_a_cancel(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(text_reply("never finished", gate=gate))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("go")])
        )
        await wait_gate(gate)
        await acp.conn.prompt(
            session_id=session, prompt=[text_block("F1")], ink={"deliverAs": "follow_up"}
        )
        await acp.conn.cancel(session_id=session)
        assert (await asyncio.wait_for(running, WITHIN)).stop_reason == "cancelled"
        restored = await acp.client.wait_for(
            lambda: [p for m, p in acp.client.notes if m == "ink/input_restored"]
        )
        assert restored[0]["text"] == "F1" and restored[0]["count"] == 1


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
async def test_a_signal_cancels_the_prompt_and_exits_with_its_code(
    server: ScriptedServer, workspace: Path, env: dict[str, str], signum: int, code: int
) -> None:
    gate = Gate()
    server.push(text_reply("never finished", gate=gate))
    with pytest.raises(AssertionError):  # spawn_acp's own check: exit 0
        async with spawn_acp(server, workspace, env) as acp:
            session = await acp.start(workspace)
            running = asyncio.ensure_future(
                acp.conn.prompt(session_id=session, prompt=[text_block("go")])
            )
            await wait_gate(gate)
            acp.process.send_signal(signum)
            answer = await asyncio.wait_for(running, WITHIN)
            assert answer.stop_reason == "cancelled"
            assert await asyncio.wait_for(acp.process.wait(), WITHIN) == code


async def test_stdin_closed_mid_run_settles_and_exits_zero(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    gate = Gate()
    server.push(text_reply("never finished", gate=gate))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("go")])
        )
        await wait_gate(gate)
    # spawn_acp closed stdin and checked the exit status (0); the stream was closed.
    assert await asyncio.to_thread(server.disconnected.wait, WITHIN)
    with pytest.raises(ConnectionError):
        await running


async def test_queued_input_can_be_taken_back(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    from acp import RequestError

    gate = Gate()
    server.push(text_reply("first", gate=gate))
    async with spawn_acp(server, workspace, env) as acp:
        session = await acp.start(workspace)
        running = asyncio.ensure_future(
            acp.conn.prompt(session_id=session, prompt=[text_block("go")])
        )
        await wait_gate(gate)
        ids = []
        for text in ("A", "B", "C"):
            queued = await acp.conn.prompt(
                session_id=session, prompt=[text_block(text)], ink={"deliverAs": "follow_up"}
            )
            assert queued.field_meta is not None
            ids.append(queued.field_meta["ink"]["queued"]["id"])
        removed = await acp.conn.ext_method(
            "ink/remove_queued", {"sessionId": session, "id": ids[1]}
        )
        assert removed["removed"]["text"] == "B"
        with pytest.raises(RequestError):
            await acp.conn.ext_method("ink/remove_queued", {"sessionId": session, "id": ids[1]})
        cleared = await acp.conn.ext_method("ink/clear_queue", {"sessionId": session})
        assert [e["text"] for e in cleared["removed"]] == ["A", "C"]
        gate.open()
        assert (await asyncio.wait_for(running, WITHIN)).stop_reason == "end_turn"
        last_queue = [p for m, p in acp.client.notes if m == "ink/queue_update"][-1]
        assert last_queue["entries"] == []
    assert len(server.requests) == 1
