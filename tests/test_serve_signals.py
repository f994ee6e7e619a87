"""A real `ink serve` stops cleanly on SIGINT, SIGTERM and SIGHUP (the terminal closed).

For each signal, with one session running a `sleep` through bash (after an earlier
command that left a `sleep ... &` job) and another waiting on the model's stream:

- the server exits with 130 / 143 / 129 (not by the signal), soon;
- no `sleep` is left: the running command's group and the job are both gone;
- the model's stream was closed (the scripted server saw the hang-up);
- each open SSE stream got its session's last events (`agent_settled`, aborted) and
  then ended;
- each session file has its run's end as the TUI writes it (the aborted call's result,
  then an `interrupt` line) and its lock is released.

And: a second signal while the first one's shutdown waits (a command that ignores
SIGTERM) exits at once, still killing what the commands started; a signal the server was
started with ignored (`nohup`) is left alone. In process: the registry closes once,
however often it is asked to (the signal's stop and uvicorn's lifespan), and then opens
nothing.

Nothing waits on a sleep being long enough: every wait is for a condition, with a
deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from ink_tui.serve.sessions import RegistryClosed
from tests.process_markers import alive, kill_marked, new_marker, wait_alive, wait_gone
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import SseEvent, read_sse, serve
from tests.serve_process import InkServe, ink_serve

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")

EXIT_CODES = [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)]
SIGNAL_IDS = ["SIGTERM", "SIGHUP", "SIGINT"]
# Generous for a busy machine; a clean stop takes about a second.
EXIT_WITHIN = 30.0


def _entries(path: Path) -> list[dict[str, Any]]:
    """The file's lines without their place in the session's tree (id, parent, time)."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{k: v for k, v in line.items() if k not in TREE_KEYS} for line in lines]


TREE_KEYS = ("id", "parent_id", "ts")


def _lock_released(path: Path) -> bool:
    return not path.with_suffix(".lock").exists()


async def _listen(ink: InkServe, sid: str) -> asyncio.Task[list[SseEvent]]:
    """A client's SSE stream from the start, read in the background to its end."""
    ready = asyncio.Event()

    async def read() -> list[SseEvent]:
        url = f"/api/sessions/{sid}/events"
        async with ink.client.stream("GET", url, headers={"Last-Event-ID": "0"}) as stream:
            assert stream.status_code == 200
            ready.set()
            # Until the stream ends: nothing satisfies `until`.
            return await read_sse(stream, lambda events: False, within=EXIT_WITHIN)

    task = asyncio.ensure_future(read())
    await asyncio.wait_for(ready.wait(), 15)
    return task


async def _start_bash_session(
    ink: InkServe, server: ScriptedServer, job: str, running: str, *, ignore_term: bool = False
) -> str:
    """A session whose first command left `sleep <job> &` and whose second one, `sleep
    <running>`, is running now."""
    trap = "trap '' TERM\n" if ignore_term else ""
    server.push(
        tool_reply([("bash", {"command": f"sleep {job} >/dev/null 2>&1 &\necho started"})]),
        tool_reply([("bash", {"command": f"{trap}sleep {running}"}, "call_running")]),
    )
    sid = await ink.new_session()
    await ink.send(sid, "start the server, then wait")
    await asyncio.to_thread(wait_alive, [job, running], 30)
    return sid


def _assert_run_end_recorded(ink: InkServe, sid: str, call_id: str | None) -> None:
    path = ink.session_file(sid)
    entries = _entries(path)
    assert entries[-1] == {"type": "interrupt"}, entries[-3:]
    if call_id is not None:
        results = [e for e in entries if e["type"] == "tool_result"]
        assert results[-1]["call_id"] == call_id, results[-1]
    assert _lock_released(path)


def _assert_stream_ended_settled(events: list[SseEvent]) -> None:
    settled = [e for e in events if e.event == "agent_settled"]
    assert settled, [e.event for e in events][-5:]
    assert settled[-1].data["stop_reason"] == "aborted"


@pytest.mark.parametrize(("sig", "code"), EXIT_CODES, ids=SIGNAL_IDS)
async def test_a_signal_aborts_every_run_kills_commands_and_jobs_and_closes_files(
    sig: signal.Signals, code: int, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    prefix = new_marker()
    job, running = f"{prefix}1", f"{prefix}2"
    gate = Gate()
    try:
        async with ink_serve(server, workspace, tmp_path) as ink:
            bash_sid = await _start_bash_session(ink, server, job, running)
            bash_stream = await _listen(ink, bash_sid)
            # A second session, waiting on the model's stream.
            server.push(text_reply("never finished", gate=gate))
            model_sid = await ink.new_session()
            model_stream = await _listen(ink, model_sid)
            await ink.send(model_sid, "think")
            await wait_gate(gate)

            ink.process.send_signal(sig)
            assert await ink.exit_status() == code
            assert await asyncio.to_thread(wait_gone, [job, running], 0) == []
            assert await asyncio.to_thread(server.disconnected.wait, 5), "stream never closed"
            _assert_stream_ended_settled(await asyncio.wait_for(bash_stream, 10))
            _assert_stream_ended_settled(await asyncio.wait_for(model_stream, 10))
            _assert_run_end_recorded(ink, bash_sid, "call_running")
            _assert_run_end_recorded(ink, model_sid, None)
            err = ink.stderr_text()
            assert "Traceback" not in err, err
    finally:
        gate.open()
        kill_marked(prefix)


async def test_a_second_signal_exits_at_once_and_still_kills_the_commands(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    prefix = new_marker()
    job, running = f"{prefix}1", f"{prefix}2"
    try:
        async with ink_serve(server, workspace, tmp_path) as ink:
            # The running command ignores SIGTERM: the abort waits out its grace.
            await _start_bash_session(ink, server, job, running, ignore_term=True)
            ink.process.send_signal(signal.SIGTERM)
            # The first signal's shutdown is under way: the server stopped answering.
            await _until_refused(ink)
            assert alive(running), "the command was gone before the second signal"
            ink.process.send_signal(signal.SIGINT)
            # The second signal's status: it left before the first one's stop (which
            # waits out the command's grace, then exits 143) was done.
            assert await ink.exit_status() == 130
            assert await asyncio.to_thread(wait_gone, [job, running], 0) == []
    finally:
        kill_marked(prefix)


async def _until_refused(ink: InkServe, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            response = await ink.client.get("/api/sessions", timeout=2)
        except httpx.TransportError:
            return
        if response.status_code == 503:
            assert response.json()["error"] == "stopping"
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the server still answers requests after the signal")


def _signal_mask(pid: int, field: str) -> int:
    """A mask of /proc/PID/status (`SigIgn`, `SigCgt`): bit N-1 is signal N."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return int(value.strip(), 16)
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _has(mask: int, sig: int) -> bool:
    return bool(mask >> (sig - 1) & 1)


async def test_a_signal_ignored_at_start_is_left_alone(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    async with ink_serve(server, workspace, tmp_path, ignored=(signal.SIGHUP,)) as ink:
        sid = await ink.new_session()
        pid = ink.process.pid
        # Still ignored (`nohup ink serve`), while SIGTERM and SIGINT are handled.
        assert _has(_signal_mask(pid, "SigIgn"), signal.SIGHUP)
        assert not _has(_signal_mask(pid, "SigCgt"), signal.SIGHUP)
        assert _has(_signal_mask(pid, "SigCgt"), signal.SIGTERM)
        assert _has(_signal_mask(pid, "SigCgt"), signal.SIGINT)
        ink.process.send_signal(signal.SIGHUP)
        assert (await ink.client.get(f"/api/sessions/{sid}")).status_code == 200
        ink.process.send_signal(signal.SIGTERM)
        assert await ink.exit_status() == 143


async def test_the_registry_closes_once_and_then_opens_nothing(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    async with serve(server, workspace) as served:
        sid = await served.new_session()
        opened = served.registry.get(sid)
        assert opened is not None
        # The signal's close and the lifespan's: both wait for the one close.
        first = asyncio.ensure_future(served.registry.aclose())
        second = asyncio.ensure_future(served.registry.aclose())
        await asyncio.wait_for(asyncio.gather(first, second), 15)
        assert opened.log.closed and served.registry.get(sid) is None
        with pytest.raises(RegistryClosed):
            await served.registry.open()
