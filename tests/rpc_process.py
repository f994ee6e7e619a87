"""A real `ink --mode rpc` process for tests: started with this interpreter, in an
environment of its own (none of the developer's INK_ / OPENAI_ / XDG_ settings, a HOME
under the test's tmp_path), pointed at the loopback scripted server.

`spawn_rpc` gives an `RpcClient` (await it, or `async with` it to close it at the end);
`rpc_with_stderr` also collects what the process writes to stderr; `run_rpc` feeds a
whole input at once and returns what came out, for a test that needs no client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ink_tui.opening import Opening
from ink_tui.rpc_client import RpcClient
from tests.scripted_server import ScriptedServer

# Generous for a busy machine: a clean exit takes about a second.
WITHIN = 30.0


def isolated_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment less ink's settings, with HOME and XDG under tmp_path
    (sessions, trust and extensions found there are the test's own)."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INK_", "OPENAI_", "XDG_")) and k != "HOME"
    }
    clean.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    return clean


def scripted_args(server: ScriptedServer, *extra: str, model: str = "scripted-model") -> list[str]:
    """The flags that send ink's requests to `server`, then `extra`."""
    return ["--base-url", server.base_url, "--model", model, "--api-key", "k", *extra]


def spawn_rpc(
    server: ScriptedServer, workspace: Path, env: dict[str, str], *extra: str
) -> Opening[RpcClient]:
    """`ink --mode rpc` against `server`, in `workspace`, with `extra` flags."""
    return RpcClient.spawn(scripted_args(server, *extra), cwd=workspace, env=env)


def rpc_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "ink_tui", "--mode", "rpc", *args]


@asynccontextmanager
async def rpc_with_stderr(
    args: list[str], workspace: Path, env: dict[str, str]
) -> AsyncIterator[tuple[RpcClient, bytearray]]:
    """An RPC process whose stderr is collected (into the bytearray) until it exits; it
    must exit 0 once its stdin is closed."""
    process = await asyncio.create_subprocess_exec(
        *rpc_argv(*args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workspace,
        env=env,
    )
    assert process.stderr is not None
    collected = bytearray()

    async def drain(stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(1 << 16):
            collected.extend(chunk)

    draining = asyncio.ensure_future(drain(process.stderr))
    client = RpcClient(process)
    try:
        yield client, collected
    finally:
        assert await client.close(WITHIN) == 0
        await asyncio.wait_for(draining, WITHIN)


def run_rpc(
    args: list[str], workspace: Path, env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run an RPC process to its end on `stdin` (its end of input ends the session)."""
    return subprocess.run(
        rpc_argv(*args),
        cwd=workspace,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
