"""`ink serve` as a command: the loopback rule, the printed link, and sessions shared
with the other front ends through the same files, never written by two processes at
once (the session lock), all through real subprocesses."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply
from tests.serve_helpers import read_sse, settled


def env_for(home: Path, server: ScriptedServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="m",
    )
    return env


def test_a_host_that_is_not_loopback_is_refused_without_allow_remote(
    workspace: Path, tmp_path: Path, server: ScriptedServer
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ink_tui", "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=workspace,
        env=env_for(tmp_path, server),
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "0.0.0.0" in result.stderr and "not a loopback address" in result.stderr
    assert "--allow-remote" in result.stderr
    assert result.stdout == ""


@asynccontextmanager
async def ink_serve(
    workspace: Path, env: dict[str, str], *extra: str
) -> AsyncIterator[tuple[httpx.AsyncClient, asyncio.subprocess.Process]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ink_tui",
        "serve",
        "--port",
        "0",
        *extra,
        cwd=workspace,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
        assert line.startswith("ink serve: http://127.0.0.1:"), line
        url = line.split(" ", 2)[2].strip()
        base, _, token = url.partition("/?token=")
        async with httpx.AsyncClient(
            base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=15
        ) as client:
            yield client, process
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


async def ink_print(workspace: Path, env: dict[str, str], *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ink_tui",
        *args,
        cwd=workspace,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_a_session_open_in_one_process_is_refused_by_another(
    workspace: Path, tmp_path: Path, server: ScriptedServer
) -> None:
    env = env_for(tmp_path, server)
    server.push(text_reply("served answer"))
    async with ink_serve(workspace, env) as (client, process):
        opened = await client.post("/api/sessions", json={})
        assert opened.status_code == 201
        sid = opened.json()["session"]["session_id"]
        async with client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "hi"}
        ) as stream:
            await read_sse(stream, settled)

        # While the server holds it, `ink -r ID -p` is refused, saying by whom.
        refused = await ink_print(workspace, env, "-r", sid[:6], "-p", "more")
        out, err = await refused.communicate()
        assert refused.returncode == 2, err
        message = err.decode()
        assert f"session {sid} is open in another process (ink serve, pid {process.pid})" in message
        assert len(server.requests) == 1  # nothing was sent for the refused prompt

        # Closed by the server, it is an ordinary saved session again: the same file.
        closed = await client.delete(f"/api/sessions/{sid}")
        assert closed.status_code == 200
        gate = Gate()
        server.push(text_reply("printed answer", gate=gate))
        printing = await ink_print(workspace, env, "-r", sid[:6], "-p", "more")
        await wait_gate(gate)
        # Now the print process holds it, and the server is the one refused.
        resumed = await client.post("/api/sessions", json={"resume": sid[:6]})
        assert resumed.status_code == 409
        assert resumed.json()["error"] == "locked"
        assert f"ink, pid {printing.pid}" in resumed.json()["message"]
        gate.open()
        out, err = await printing.communicate()
        assert printing.returncode == 0, err
        assert out.decode().strip() == "printed answer"
        # The print run saw the served conversation: one file, shared in turn.
        assert [m["content"] for m in server.requests[1]["messages"] if m["role"] == "user"] == [
            "hi",
            "more",
        ]
        resumed = await client.post("/api/sessions", json={"resume": sid[:6]})
        assert resumed.status_code == 201
        assert resumed.json()["session"]["message_count"] == 4
        again = await client.post("/api/sessions", json={"resume": sid})
        assert again.status_code == 200  # open here already: the same session

    assert process.returncode == 130
    assert not list((tmp_path / "data").rglob("*.lock"))  # released on the way out


def test_a_public_origin_that_is_not_an_origin_is_refused(
    workspace: Path, tmp_path: Path, server: ScriptedServer
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ink_tui", "serve", "--public-origin", "ink.example.com/x"],
        cwd=workspace,
        env=env_for(tmp_path, server),
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "--public-origin 'ink.example.com/x' is not an origin" in result.stderr


async def test_served_sessions_ask_unless_the_config_or_the_flag_says_otherwise(
    workspace: Path, tmp_path: Path, server: ScriptedServer
) -> None:
    env = env_for(tmp_path, server)
    policies = []
    async with ink_serve(workspace, env) as (client, _):
        policies.append((await client.post("/api/sessions", json={})).json()["session"])
        # The real server refuses a Host that is not its own address, a body that is
        # not JSON or is over its limit, and a change borne by the cookie alone from
        # another page (the curl checks).
        wrong = await client.get("/api/sessions", headers={"Host": "rebind.example"})
        assert wrong.status_code == 421
        plain = await client.post(
            "/api/sessions", content=b"{}", headers={"Content-Type": "text/plain"}
        )
        assert plain.status_code == 415
        big = await client.post("/api/sessions", json={"padding": "x" * (2 << 20)})
        assert big.status_code == 413
        token = client.headers["Authorization"].split()[-1]
        cookie_only = {"Authorization": "", "Cookie": f"ink_token={token}"}
        other = await client.post(
            "/api/sessions",
            json={},
            headers={**cookie_only, "Origin": f"http://127.0.0.1:{client.base_url.port + 1}"},
        )
        assert other.status_code == 403 and other.json()["error"] == "cross_origin"
        assert len((await client.get("/api/sessions")).json()["sessions"]) == 1
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text('[approval]\npolicy = "edits"\n')
    # Looser than ask: applied only from a trusted file (tests/test_project_trust.py).
    async with ink_serve(workspace, env, "--trust-project") as (client, _):
        policies.append((await client.post("/api/sessions", json={})).json()["session"])
    async with ink_serve(workspace, env, "--approval", "auto") as (client, _):
        policies.append((await client.post("/api/sessions", json={})).json()["session"])
    assert [state["approval"] for state in policies] == ["ask", "edits", "auto"]
