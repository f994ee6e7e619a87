"""ink as a library changes nothing process-wide; jobs belong to their session.

- Importing every module of `ink_tui` and driving an `AgentSession` (and a
  `SyncAgentSession`) leave the host's environment, signal handlers, subreaper bit and
  other process-wide settings as they were, in a fresh interpreter on the offline demo
  model. Without the `ink` command's guards, what a session's commands start is still
  found and stopped: on an abort, and on close for what finished commands left running,
  however it escaped (short of clearing its environment: that needs the guards).
- Under a real `ink serve`, two sessions each list and stop only their own jobs, and the
  server's exit stops the rest.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from tests.process_markers import ESCAPE_FORMS, alive, kill_marked, new_marker, wait_gone
from tests.serve_helpers import SseEvent, read_sse

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")

ROOT = Path(__file__).resolve().parent.parent

# What the child checks before and after: every piece of process-wide state a library
# could change by being imported or used.
_SCRIPT = r"""
import asyncio, ctypes, gc, importlib, json, os, pkgutil, signal, sys, threading, time

from tests.process_markers import alive

def subreaper():
    value = ctypes.c_int(-1)
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    return value.value

def umask():
    mask = os.umask(0o22)
    os.umask(mask)
    return mask

def state():
    return {
        "environ": dict(os.environ),
        "signals": {signal.Signals(n).name if n in signal.Signals._value2member_map_ else n:
                    signal.getsignal(n) for n in sorted(signal.valid_signals())},
        "subreaper": subreaper(),
        "cwd": os.getcwd(),
        "umask": umask(),
        "gc": (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count() > 0),
        "switch_interval": sys.getswitchinterval(),
        "recursion_limit": sys.getrecursionlimit(),
        "excepthooks": (sys.excepthook, threading.excepthook),
        "loop_policy": type(asyncio.get_event_loop_policy()),
    }

def changed(before, after):
    out = []
    for key in before:
        old, new = before[key], after[key]
        if isinstance(old, dict):
            out += [f"{key}.{name}" for name in sorted(set(old) | set(new), key=str)
                    if old.get(name) != new.get(name)]
        elif old != new:
            out.append(f"{key}: {old!r} -> {new!r}")
    return out

report = {}
start = state()

import ink_tui
modules = [m.name for m in pkgutil.walk_packages(ink_tui.__path__, "ink_tui.")
           if m.name.rsplit(".", 1)[-1] != "__main__"]
for name in modules:
    importlib.import_module(name)
report["modules"] = len(modules)
report["import"] = changed(start, state())

from ink_tui.api import AgentSession, SyncAgentSession

FORMS = json.loads(sys.argv[1])
prefix = sys.argv[2]
left = [f"{prefix}{n}" for n in range(1, len(FORMS) + 1)]
escaped, foreground = f"{prefix}8", f"{prefix}9"

async def until(check, what, within=20.0):
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        await asyncio.sleep(0.02)

def listed(events):
    return {word for e in events if e["type"] == "jobs_update"
            for job in e["jobs"] for word in job["argv"].split()}

async def drive():
    before = state()
    events = []
    async with AgentSession.open(os.getcwd()) as session:
        session.subscribe(events.append)
        result = await session.prompt("hello")
        report["demo"] = result.stop_reason
        # Every way out of the group that keeps the environment, in one command.
        lines = [form.format(m=m) for form, m in zip(FORMS, left)]
        result = await session.prompt("!" + "\n".join(lines) + "\necho started")
        report["shell"] = result.stop_reason
        await until(lambda: set(left) <= listed(events), "every job listed")
        # An abort stops a running command and what escaped its group.
        running = session.start(f"!setsid sleep {escaped} &\nsleep {foreground}")
        await until(lambda: alive(escaped) and alive(foreground), "the command runs")
        await session.abort()
        await running
        report["after_abort"] = alive(escaped, foreground)
        report["jobs_while_open"] = len(alive(*left))
        report["session"] = changed(before, state())
    report["jobs_after_close"] = alive(*left)
    report["closed"] = changed(before, state())

asyncio.run(drive())
with SyncAgentSession.open(os.getcwd(), record=False) as sync:
    report["sync"] = sync.prompt(f"!sleep {prefix}7 >/dev/null 2>&1 & echo ok").stop_reason
report["sync_jobs_after_close"] = alive(f"{prefix}7")
report["end"] = changed(start, state())
print("REPORT " + json.dumps(report, default=str))
"""


def _child_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY")
        and not k.startswith(("INK_", "OPENAI_", "ANTHROPIC_"))
        and not k.startswith("XDG_")
    }
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_STATE_HOME=str(home / "state"),
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    )
    return env


def test_importing_and_running_a_session_changes_no_process_wide_state(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    forms = [form for name, form in ESCAPE_FORMS.items() if name != "env_cleared_setsid"]
    prefix = new_marker()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, json.dumps(forms), prefix],
            cwd=workspace,
            env=_child_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stderr
        line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
        report = json.loads(line.removeprefix("REPORT "))
    finally:
        kill_marked(prefix)  # the child's processes, should it have failed half way
    assert report["modules"] > 100
    assert report["import"] == []
    assert report["session"] == []
    assert report["closed"] == []
    assert report["end"] == []
    assert report["demo"] == "completed"
    assert report["shell"] == "completed"
    assert report["after_abort"] == []
    # Found without a subreaper (they were init's, not the child's) and stopped on close.
    assert report["jobs_while_open"] == len(forms)
    assert report["jobs_after_close"] == []
    assert report["sync"] == "completed"
    assert report["sync_jobs_after_close"] == []


# -- ink serve ----------------------------------------------------------------------------


@asynccontextmanager
async def ink_serve(
    workspace: Path, home: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, asyncio.subprocess.Process]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ink_tui",
        "serve",
        "--port",
        "0",
        "--show-tool-arguments",
        cwd=workspace,
        env=_child_env(home),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        assert line.startswith("ink serve: http://127.0.0.1:"), line
        base, _, token = line.split(" ", 2)[2].strip().partition("/?token=")
        async with httpx.AsyncClient(
            base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=15
        ) as client:
            yield client, process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def _jobs_in(events: list[SseEvent]) -> list[set[str]]:
    """The argument words of each `jobs_update`'s jobs, in order."""
    return [
        {word for job in e.data["jobs"] for word in job["argv"].split()}
        for e in events
        if e.event == "jobs_update"
    ]


async def _all_events(client: httpx.AsyncClient, sid: str) -> list[SseEvent]:
    """Every event the session emitted so far, replayed from the start."""
    last_seq = (await client.get(f"/api/sessions/{sid}")).json()["session"]["last_seq"]
    url = f"/api/sessions/{sid}/events"
    async with client.stream("GET", url, headers={"Last-Event-ID": "0"}) as stream:
        return await read_sse(stream, lambda es: bool(es) and es[-1].data["seq"] >= last_seq)


async def _wait_listed(client: httpx.AsyncClient, sid: str, marker: str) -> None:
    url = f"/api/sessions/{sid}/events"
    async with client.stream("GET", url, headers={"Last-Event-ID": "0"}) as stream:
        await read_sse(stream, lambda es: any(marker in words for words in _jobs_in(es)), 20)


async def test_under_ink_serve_each_session_lists_and_stops_only_its_own_jobs(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    prefix = new_marker()
    mine, theirs = f"{prefix}1", f"{prefix}2"
    try:
        async with ink_serve(workspace, tmp_path) as (client, process):
            a, b = [
                (await client.post("/api/sessions", json={})).json()["session"]["session_id"]
                for _ in range(2)
            ]
            for sid, marker in ((a, mine), (b, theirs)):
                started = await client.post(
                    f"/api/sessions/{sid}/messages", json={"text": f"!sleep {marker} &"}
                )
                assert started.status_code == 202, started.text
                await _wait_listed(client, sid, marker)
            a_jobs = _jobs_in(await _all_events(client, a))
            b_jobs = _jobs_in(await _all_events(client, b))
            assert any(mine in words for words in a_jobs)
            assert not any(theirs in words for words in a_jobs)
            assert any(theirs in words for words in b_jobs)
            assert not any(mine in words for words in b_jobs)

            # Closing a session stops its jobs, and only its jobs.
            assert (await client.delete(f"/api/sessions/{a}")).status_code == 200
            assert await asyncio.to_thread(wait_gone, [mine], 10.0) == []
            assert alive(theirs) != []

            # The server's exit stops what is left.
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 20)
        assert await asyncio.to_thread(wait_gone, [theirs], 10.0) == []
    finally:
        kill_marked(prefix)
