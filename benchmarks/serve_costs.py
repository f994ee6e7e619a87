"""What an `ink serve` session costs besides CPU: the measurements behind docs/scaling.md.

    python -m benchmarks.serve_costs [--sessions 200] [--fd-limit 64]

prints three measurements, each in a few seconds:

1. Idle open sessions: a real `ink serve` (an empty home and workspace, a model URL that
   is never called), `--sessions` sessions opened with `POST /api/sessions` and never
   prompted; its RSS (`VmRSS`) and open file descriptors before and after.
2. The replay buffer: ten `EventLog`s (`ink_tui/serve/events_stream.py`) each filled to
   its capacity with `message_update` events shaped as the session emits them (a new
   dict and text string each), with 20, 200 and 2,000 bytes of text; the bytes
   `tracemalloc` counts per event and per full buffer.
3. Out of file descriptors: a real `ink serve` started with `RLIMIT_NOFILE` at
   `--fd-limit`, asked for that many sessions: how many opened, what the others were
   answered, whether it still answers after, and its exit status on Ctrl+C.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import signal
import subprocess
import sys
import tempfile
import tracemalloc
from collections import Counter
from pathlib import Path

import httpx

from benchmarks.common import child_env, interruptible, isolated_home
from benchmarks.serve_clients import vm_kib

NO_MODEL = "http://127.0.0.1:9/v1"


def start_serve(tmp: Path, fd_limit: int | None = None) -> tuple[subprocess.Popen[str], str, str]:
    """`ink serve` on loopback with its own home; (process, base URL, token)."""
    workspace = tmp / "workspace"
    workspace.mkdir()

    def limit() -> None:
        interruptible()
        if fd_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "ink_tui", "serve", "--port", "0", "-C", str(workspace)),
            *("--base-url", NO_MODEL, "--model", "bench-model", "--api-key", "bench-key"),
        ],
        cwd=workspace,
        env=child_env(**isolated_home(tmp / "home")),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=limit,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("ink serve: http://"):
        proc.kill()
        raise RuntimeError(f"ink serve did not start: {line!r}")
    base, _, token = line.split(" ", 2)[2].strip().partition("/?token=")
    return proc, base, token


def stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def idle_sessions(count: int) -> str:
    with tempfile.TemporaryDirectory(prefix="ink-bench-costs-") as tmp:
        proc, base, token = start_serve(Path(tmp))
        try:
            rss0, fd0 = vm_kib(proc.pid, "VmRSS") / 1024, fds(proc.pid)
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
                for _ in range(count):
                    response = await client.post("/api/sessions", json={})
                    if response.status_code != 201:
                        raise RuntimeError(f"POST /api/sessions: {response.status_code}")
                rss1, fd1 = vm_kib(proc.pid, "VmRSS") / 1024, fds(proc.pid)
        finally:
            stop(proc)
    return (
        f"{count} idle open sessions: RSS {rss0:.1f} -> {rss1:.1f} MiB "
        f"({(rss1 - rss0) / count * 1024:.0f} KiB each), fds {fd0} -> {fd1} "
        f"({(fd1 - fd0) / count:.2f} each)"
    )


def replay_buffer(text_bytes: int, logs: int = 10) -> str:
    from ink_tui.serve.events_stream import BUFFER_CAPACITY, EventLog

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = []
    for index in range(logs):
        session_id = f"{index:012x}"
        log = EventLog(session_id)
        for seq in range(1, BUFFER_CAPACITY + 1):
            text = (str(seq) * text_bytes)[:text_bytes]
            log.append(
                {
                    "type": "message_update",
                    "v": 1,
                    "session_id": session_id,
                    "seq": seq,
                    "run_id": "run-1",
                    "delta": {"type": "text", "text": text},
                }
            )
        kept.append(log)
    gc.collect()
    used = (tracemalloc.get_traced_memory()[0] - before) / logs
    tracemalloc.stop()
    return (
        f"replay buffer, {text_bytes} B of text an event: {used / BUFFER_CAPACITY:.0f} B "
        f"an event, {used / 2**20:.2f} MiB full ({BUFFER_CAPACITY} events)"
    )


async def out_of_fds(limit: int) -> str:
    with tempfile.TemporaryDirectory(prefix="ink-bench-costs-") as tmp:
        proc, base, token = start_serve(Path(tmp), fd_limit=limit)
        answers: Counter[str] = Counter()
        headers = {"Authorization": f"Bearer {token}"}
        try:
            async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as client:
                for _ in range(limit):
                    try:
                        response = await client.post("/api/sessions", json={})
                        answers[f"{response.status_code} {response.json().get('error', '')}"] += 1
                    except httpx.HTTPError as error:
                        answers[type(error).__name__] += 1
                try:
                    after = str((await client.get("/api/sessions")).status_code)
                except httpx.HTTPError as error:
                    after = type(error).__name__
        finally:
            code = stop(proc)
    shown = ", ".join(f"{answer.strip()}: {n}" for answer, n in answers.items())
    return (
        f"RLIMIT_NOFILE {limit}, {limit} sessions asked for: {shown}; "
        f"GET /api/sessions after: {after}; exit on Ctrl+C: {code}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--fd-limit", type=int, default=64)
    args = parser.parse_args(argv)
    print(asyncio.run(idle_sessions(args.sessions)), flush=True)
    for size in (20, 200, 2000):
        print(replay_buffer(size), flush=True)
    print(asyncio.run(out_of_fds(args.fd_limit)), flush=True)


if __name__ == "__main__":
    main()
