"""RPC `switch_session` to the session already open, and to one another process holds,
through real `ink --mode rpc` processes whose stderr is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.rpc_client import RpcClient, RpcError
from tests.rpc_process import WITHIN, isolated_env, rpc_with_stderr, scripted_args
from tests.scripted_server import ScriptedServer, text_reply


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


async def with_one_message(client: RpcClient, server: ScriptedServer) -> str:
    server.push(text_reply("noted"))
    await client.command("prompt", message="remember this")
    await client.wait_settled(within=WITHIN)
    state = await client.command("get_state")
    return str(state["session_id"])


async def test_switching_to_the_open_session_is_a_quiet_no_op(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    async with rpc_with_stderr(scripted_args(server), workspace, env) as (ink, stderr):
        session_id = await with_one_message(ink, server)
        for wanted in (session_id, session_id[:6], session_id.upper()):
            same = await ink.command("switch_session", session_id=wanted)
            assert same == {"session_id": session_id, "message_count": 2, "already_open": True}
        # Still the same session, whole, and it goes on.
        assert len((await ink.command("get_messages"))["messages"]) == 2
        server.push(text_reply("still here"))
        await ink.command("prompt", message="again")
        assert (await ink.wait_settled(within=WITHIN))["stop_reason"] == "completed"
        # Another one and back again still works.
        fresh = await ink.command("new_session")
        back = await ink.command("switch_session", session_id=session_id)
        assert fresh["session_id"] != session_id
        assert back == {"session_id": session_id, "message_count": 4}
    assert stderr.decode() == ""


async def test_a_session_another_process_holds_is_refused_without_a_traceback(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    async with rpc_with_stderr(scripted_args(server), workspace, env) as (holder, holder_err):
        held = await with_one_message(holder, server)
        async with rpc_with_stderr(scripted_args(server), workspace, env) as (ink, stderr):
            own = (await ink.command("get_state"))["session_id"]
            with pytest.raises(RpcError) as refused:
                await ink.command("switch_session", session_id=held)
            message = str(refused.value)
            assert f"session {held} is open in another process" in message
            assert f"pid {holder.process.pid}" in message
            # The refused switch changed nothing.
            assert (await ink.command("get_state"))["session_id"] == own
        assert stderr.decode() == ""
    assert holder_err.decode() == ""
