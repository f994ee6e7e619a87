"""A real `ink serve` process for tests that need one (restart, kill, what goes over the
wire): started with this interpreter on a free port, its address and token read from
the line it prints, an httpx client holding the token. The same `home` across two
starts is the same store: a restarted server finds the sessions the last one wrote."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from tests.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parent.parent
# Generous for a busy machine; a clean start or stop takes about a second.
WITHIN = 60.0
STDERR_LOG = "serve-stderr.log"


def strict_loads(text: str | bytes) -> Any:
    """`json.loads` that fails on NaN / Infinity, as a strict parser (RFC 8259) does."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON: {text[:300]!r}")

    return json.loads(text, parse_constant=refuse)


def serve_env(home: Path, server: ScriptedServer) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY")
        and not k.startswith(("INK_", "OPENAI_", "ANTHROPIC_", "XDG_"))
    }
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_STATE_HOME=str(home / "state"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="scripted-model",
        INK_API_KEY="test-key-0123456789",
        # Served sessions run without asking (the policy of a person who set `auto`).
        INK_APPROVAL="auto",
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    )
    return env


@dataclass
class InkServe:
    process: asyncio.subprocess.Process
    client: httpx.AsyncClient
    home: Path

    async def new_session(self) -> str:
        response = await self.client.post("/api/sessions", json={})
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["session_id"])

    async def resume(self, sid: str) -> dict[str, Any]:
        response = await self.client.post("/api/sessions", json={"resume": sid})
        assert response.status_code == 201, response.text
        return dict(strict_loads(response.text)["session"])

    async def send(self, sid: str, text: str) -> None:
        response = await self.client.post(f"/api/sessions/{sid}/messages", json={"text": text})
        assert response.status_code == 202, response.text

    async def state(self, sid: str) -> dict[str, Any]:
        response = await self.client.get(f"/api/sessions/{sid}")
        assert response.status_code == 200, response.text
        return dict(strict_loads(response.text)["session"])

    def session_file(self, sid: str) -> Path:
        found = list((self.home / "data").rglob(f"*_{sid}.jsonl"))
        assert len(found) == 1, found
        return found[0]

    def stderr_text(self) -> str:
        """What it wrote to stderr so far."""
        return (self.home / STDERR_LOG).read_text(errors="replace")

    async def exit_status(self, within: float = WITHIN) -> int:
        return await asyncio.wait_for(self.process.wait(), within)

    async def stop(self) -> int:
        """SIGTERM, and the exit status once it has closed its sessions."""
        self.process.send_signal(signal.SIGTERM)
        return await self.exit_status()

    async def kill(self) -> None:
        """SIGKILL: nothing is closed, as after a crash."""
        self.process.kill()
        await asyncio.wait_for(self.process.wait(), WITHIN)


def _default_signals(ignored: tuple[int, ...] = ()) -> Callable[[], None]:
    """For the child: the exit signals at their defaults (a suite run in the background
    or under nohup would hand on SIGINT or SIGHUP ignored), `ignored` ignored."""

    def reset() -> None:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)

    return reset


def _stderr_log(home: Path) -> BinaryIO:
    # Kept for a failing test's report (a pipe nobody reads could fill and block it).
    home.mkdir(parents=True, exist_ok=True)
    return open(home / STDERR_LOG, "ab")


@asynccontextmanager
async def ink_serve(
    server: ScriptedServer,
    workspace: Path,
    home: Path,
    *args: str,
    ignored: tuple[int, ...] = (),
) -> AsyncIterator[InkServe]:
    """`ink serve ARGS` with `home` as its HOME (`ignored`: signals it starts with
    ignored), until the block ends; then killed if it is still running."""
    stderr = _stderr_log(home)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ink_tui",
        "serve",
        "--port",
        "0",
        *args,
        cwd=workspace,
        env=serve_env(home, server),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        preexec_fn=_default_signals(ignored),
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), WITHIN)).decode()
        assert line.startswith("ink serve: http://127.0.0.1:"), line
        base, _, token = line.split(" ", 2)[2].strip().partition("/?token=")
        async with httpx.AsyncClient(
            base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            yield InkServe(process, client, home)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        stderr.close()
