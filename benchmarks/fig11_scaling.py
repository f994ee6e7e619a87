"""Figure 11, past one process: `ink serve` x N behind a proxy routing by session id.

A loopback simulation of docs/scaling.md's set-up, on one machine. Each run is a fresh
child process that starts:

- one loopback model server (`benchmarks.serve_model`, figure 11's: every stream paced by
  one thread, a `<t=SECONDS>` send-time marker in every write);
- `BACKENDS` real `ink serve` processes (`--port 0`), all with the same home (so one
  session store, one folder of `.jsonl` files and their `.lock`s) and the same
  workspace, each with its own token, as separate machines sharing storage would be;
- the proxy (`benchmarks.affinity_proxy`, its own process and token): a new session goes
  to the backends in turn and is pinned to the one that made it; a request naming a
  session goes where it is pinned (else by a hash of the id). With `--front nginx` (the
  machine's nginx; the project does not install it) it is nginx instead, a location
  `/bN/` per backend, and the client keeps which prefix each session was made under.
  With `--front haproxy` (the machine's HAProxy, 2.6 here) HAProxy learns the pairing
  from each 201 answer itself (`HAProxyFront`).

Then:

1. `SESSIONS` sessions are created through the proxy and `DIRECT` more straight on the
   backends (spread evenly), each with its SSE stream open (`benchmarks.serve_clients`,
   one asyncio loop in this process), and every prompt posted at once. Each stream is
   figure 11's: a write every `TICK_MS` ms, `RATE` bytes a second, for `STREAM_S`.
2. While they stream, a backend that does not hold one proxied session is asked to open
   it (`POST /api/sessions {"resume": id}` straight to it): the lock must refuse it
   (409 `locked`, naming the holder's pid), and nothing must change.
3. Over `WINDOW_S` in the middle of the streams (from `WARMUP_S` after the last stream's
   first write): model byte to SSE event for the proxied sessions (`p50_ms`, `p99_ms`,
   `max_ms`) and the direct ones (`direct_p50_ms`, `direct_p99_ms`): the same backends
   at the same moment, without the proxy, so the difference is what the hop adds; each
   backend's CPU (% of one core), the backends' CPU per streamed delta, the proxy's CPU
   (and per proxied delta), the model server's and the clients' CPU, the clients' loop
   lag, and the time the backends were runnable but had no CPU (schedstat).
4. Every run must complete with every marker delivered. Each proxied session must be
   open on exactly its pinned backend (`GET` straight on each: 200 there, 404 elsewhere)
   and found through the front (`GET` through it: 200), and no request routed by hash
   (`misrouted`, `by_hash`).
5. The hand-over: the refused session is closed through the proxy (`DELETE`), then
   opened straight on the other backend (`resume`: 201), and an SSE client that held
   events up to its `last_seq - 5` from the first backend reconnects there with that
   `Last-Event-ID`: the first event must be `replay_gap` (the new process's buffer is
   empty). The proxy, whose pin still names the first backend, is asked for it too
   (`stale_pin_status`: 404 `not_found`, as any front end that pins without learning of
   the move would answer).
6. Every session is closed. Then a new session on the first backend starts streaming and
   that backend is SIGKILLed: the second must open the session (`kill_resume_status`
   201: the kernel let go of the lock with its holder), and a client reconnecting there
   with the last seq it read must get `replay_gap` first (`kill_missing`: up to the end
   of the block of seqs the dead process had reserved). What its file holds after
   (`kill_file_roles`) is recorded: the answer under way dies with the process. So is
   what the front answers for a session it had pinned to the dead backend
   (`dead_pin_status`).
7. The second backend is stopped with SIGINT (30 s, then killed; `stop_s`, `killed`),
   and every other session file read back with ink's reader: each must hold its prompt
   and its whole answer (`files_ok` of `files`).

Peak RSS (`VmHWM`) of each backend once every run settled, and idle at start; the load
average (`os.getloadavg`) at start and end, since this machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import (
    REPO_ROOT,
    Sample,
    child_env,
    interruptible,
    isolated_home,
    median,
    percentile,
    run_child,
    write_json,
)
from benchmarks.fig7_serve import SseReader
from benchmarks.serve_clients import (
    LoopLag,
    StreamClient,
    open_streams,
    process_cpu_s,
    prompt,
    vm_kib,
)
from benchmarks.serve_model import ModelServer
from benchmarks.stamped_server import MARKER, stamped_url

BACKENDS = 2
SESSIONS = 24
DIRECT = 6
RATE = 1024
TICK_MS = 20
STREAM_S = 20.0
WARMUP_S = 3.0
WINDOW_S = 10.0
QUICK_SESSIONS = 4
QUICK_DIRECT = 2
QUICK_STREAM_S = 4.0
QUICK_WARMUP_S = 0.5
QUICK_WINDOW_S = 1.5
TIMEOUT_S = 120.0
STOP_S = 30.0


class Backend:
    """A real `ink serve` on the shared home and workspace, its stderr in a file."""

    def __init__(self, url: str, home: Path, workspace: Path, log: Path) -> None:
        self.log = log
        with log.open("w") as err:
            self.proc = subprocess.Popen(
                [
                    *(sys.executable, "-m", "ink_tui", "serve", "--port", "0"),
                    *("-C", str(workspace), "--base-url", url),
                    *("--model", "bench-model", "--api-key", "bench-key"),
                ],
                cwd=workspace,
                env=child_env(**isolated_home(home)),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                preexec_fn=interruptible,
                text=True,
            )
        self.base = ""
        self.token = ""

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def started(self) -> None:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 60)
        if not line.startswith("ink serve: http://"):
            raise RuntimeError(f"ink serve did not start: {line!r}\n{self.log.read_text()}")
        self.base, _, self.token = line.split(" ", 2)[2].strip().partition("/?token=")

    def client(self) -> httpx.AsyncClient:
        return _client(self.base, self.token)

    def fds(self) -> int:
        """Its open file descriptors (sockets, session files, locks, pipes)."""
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def runqueue_s(self) -> float:
        total = 0
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[1])
            except (OSError, IndexError):
                continue  # a thread that ended meanwhile
        return total / 1e9

    def stop(self) -> tuple[float, bool, int]:
        """SIGINT, wait; (seconds to exit, whether it had to be killed, exit status)."""
        started = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(STOP_S)
            return time.monotonic() - started, False, code
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return time.monotonic() - started, True, self.proc.wait()


class ProxyProcess:
    """`benchmarks.affinity_proxy` in a process of its own, with a fresh token: it deals
    new sessions out and learns where each went."""

    name = "python"

    def __init__(self, backends: list[Backend], tmp: Path) -> None:
        import secrets

        del tmp
        self.token = secrets.token_urlsafe(24)
        config = {"token": self.token, "backends": [[b.base, b.token] for b in backends]}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.affinity_proxy"],
            cwd=REPO_ROOT,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(config) + "\n")
        self.proc.stdin.close()
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.proc.kill()
            raise RuntimeError(f"the proxy did not start: {line!r}")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"
        self._client = _client(self.base, self.token)
        self.pins: dict[str, int] = {}

    async def open(self, count: int, direct: list[httpx.AsyncClient]) -> list[StreamClient]:
        readers = await open_streams(self._client, count)
        self.pins = {k: int(v) for k, v in (await self.stats())["pins"].items()}
        return readers

    def via(self, session_id: str) -> httpx.AsyncClient:
        return self._client

    def cpu_s(self) -> float:
        return process_cpu_s(self.proc.pid)

    async def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = (await self._client.get("/_proxy/stats")).json()
        return stats

    async def aclose(self) -> None:
        await self._client.aclose()

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class NginxFront:
    """nginx (the system's, `--front nginx`) in front: a location per backend, `/bN/`,
    with that backend's Host and token, no response buffering, HTTP/1.1 and keep-alive
    to the backends, and its own token checked. nginx cannot learn where a new session
    went, so the client keeps the pairing: it creates each session under one prefix and
    uses that prefix for it afterwards (docs/scaling.md, "a path prefix per backend")."""

    name = "nginx"

    def __init__(self, backends: list[Backend], tmp: Path) -> None:
        import secrets
        import shutil
        import socket

        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            raise RuntimeError("--front nginx: no nginx on this machine")
        self.token = secrets.token_urlsafe(24)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        root = tmp / "nginx"
        root.mkdir()
        (root / "nginx.conf").write_text(_nginx_conf(root, port, self.token, backends))
        self.proc = subprocess.Popen(
            [nginx, "-p", str(root), "-c", str(root / "nginx.conf"), "-g", "daemon off;"],
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    log = root / "error.log"
                    raise RuntimeError(
                        f"nginx did not start: {log.read_text() if log.exists() else ''}"
                    ) from None
                time.sleep(0.05)
        self._clients = [_client(f"{self.base}/b{i}", self.token) for i in range(len(backends))]
        self.pins: dict[str, int] = {}

    async def open(self, count: int, direct: list[httpx.AsyncClient]) -> list[StreamClient]:
        readers: list[StreamClient] = []
        n = len(self._clients)
        for i, client in enumerate(self._clients):
            opened = await open_streams(client, count // n + (i < count % n))
            self.pins.update((r.session_id, i) for r in opened)
            readers += opened
        return readers

    def via(self, session_id: str) -> httpx.AsyncClient:
        index = self.pins.get(session_id)
        if index is None:
            index = zlib.crc32(session_id.encode()) % len(self._clients)
        return self._clients[index]

    def cpu_s(self) -> float:
        """The master's and its workers' CPU."""
        pid = self.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return sum(process_cpu_s(p) for p in [pid, *map(int, children)])

    async def stats(self) -> dict[str, Any]:
        return {"pins": self.pins, "by_hash": 0, "relayed_reads": None}

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class HAProxyFront:
    """HAProxy (the system's, `--front haproxy`, 2.6 here) in front, learning where each
    session went with no help from the client: a new session goes to a backend at
    random; that backend's 201 answer is read whole (`http-response wait-for-body`) and
    its `session_id` written into a map, id -> backend (`http-response set-map`); a
    request naming a session is routed by the map (`path,field(4,/)`), else by a hash of
    the id. Each backend section sets that backend's Host and token; HAProxy's own
    token is checked in the frontend."""

    name = "haproxy"
    no_delay = True

    def __init__(self, backends: list[Backend], tmp: Path) -> None:
        import secrets
        import shutil
        import socket

        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not Path(haproxy).exists():
            raise RuntimeError("--front haproxy: no haproxy on this machine")
        self.token = secrets.token_urlsafe(24)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        root = tmp / "haproxy"
        root.mkdir()
        sessions_map = root / "sessions.map"
        sessions_map.write_text("")
        config = root / "haproxy.cfg"
        config.write_text(_haproxy_conf(port, self.token, sessions_map, backends, self.no_delay))
        self._log = root / "haproxy.log"
        with self._log.open("w") as err:
            self.proc = subprocess.Popen(
                [haproxy, "-db", "-f", str(config)], stdin=subprocess.DEVNULL, stderr=err
            )
        _wait_for_port(port, self.proc, self._log)
        self._client = _client(self.base, self.token)
        self.pins: dict[str, int] = {}

    async def open(self, count: int, direct: list[httpx.AsyncClient]) -> list[StreamClient]:
        readers = await open_streams(self._client, count)
        # Where HAProxy sent each: asked of the backends themselves, for the checks.
        for reader in readers:
            for index, client in enumerate(direct):
                if (await client.get(f"/api/sessions/{reader.session_id}")).status_code == 200:
                    self.pins[reader.session_id] = index
        return readers

    def via(self, session_id: str) -> httpx.AsyncClient:
        return self._client

    def cpu_s(self) -> float:
        return process_cpu_s(self.proc.pid)

    async def stats(self) -> dict[str, Any]:
        return {"pins": self.pins, "by_hash": None, "relayed_reads": None}

    async def aclose(self) -> None:
        await self._client.aclose()

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class HAProxyDelayFront(HAProxyFront):
    """`--front haproxy-delay`: the same without `option http-no-delay`, to show what it
    is for (HAProxy holds small writes back for more, and SSE waits)."""

    name = "haproxy-delay"
    no_delay = False


def _wait_for_port(port: int, proc: subprocess.Popen[Any], log: Path) -> None:
    import socket

    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                text = log.read_text() if log.exists() else ""
                raise RuntimeError(f"the front did not start: {text[-2000:]}") from None
            time.sleep(0.05)


def _haproxy_conf(
    port: int, token: str, sessions_map: Path, backends: list[Backend], no_delay: bool = True
) -> str:
    n = len(backends)
    refuse = "http-request return status 401 content-type application/json string "
    refuse += """'{"error":"unauthorized"}'"""
    sections = []
    for i, backend in enumerate(backends):
        netloc = backend.base.removeprefix("http://")
        # The id from the 201 answer's JSON: what precedes `"session_id": "`, then what
        # follows the id's closing quote, cut away.
        learned = "res.body,regsub('^.*\\\"session_id\\\": *\\\"',''),regsub('\\\".*$','')"
        sections.append(
            f"""backend b{i}
  http-request set-header Host {netloc}
  http-request set-header Authorization "Bearer {backend.token}"
  http-response wait-for-body time 2s if {{ status 201 }}
  http-response set-map({sessions_map}) %[{learned}] b{i} if {{ status 201 }}
  server s{i} {netloc}
"""
        )
    return f"""global
  maxconn 4096
defaults
  mode http
  {"option http-no-delay" if no_delay else "# (option http-no-delay left out)"}
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout tunnel 60s
frontend ink
  bind 127.0.0.1:{port}
  {refuse} unless {{ req.hdr(authorization) -m str "Bearer {token}" }}
  http-request set-var(txn.sid) path,field(4,/) if {{ path_beg /api/sessions/ }}
  http-request set-var(txn.be) var(txn.sid),map({sessions_map}) if {{ var(txn.sid) -m found }}
  use_backend %[var(txn.be)] if {{ var(txn.be) -m found }}
  use_backend b%[var(txn.sid),crc32,mod({n})] if {{ var(txn.sid) -m found }}
  use_backend b%[rand({n})] if {{ method POST }} {{ path /api/sessions }}
  default_backend b0
{"".join(sections)}"""


def _nginx_conf(root: Path, port: int, token: str, backends: list[Backend]) -> str:
    temp = " ".join(
        f"{kind}_temp_path {root / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    temp += f" uwsgi_temp_path {root / 'uwsgi'}; scgi_temp_path {root / 'scgi'};"
    upstreams, locations = [], []
    for i, backend in enumerate(backends):
        netloc = backend.base.removeprefix("http://")
        upstreams.append(f"upstream b{i} {{ server {netloc}; keepalive 32; }}")
        locations.append(
            f"""location /b{i}/ {{
      proxy_pass http://b{i}/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host {netloc};
      proxy_set_header Authorization "Bearer {backend.token}";
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 60s;
    }}"""
        )
    return f"""worker_processes 1;
pid {root / "nginx.pid"};
error_log {root / "error.log"} warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  {temp}
  {chr(10).join(upstreams)}
  server {{
    listen 127.0.0.1:{port};
    if ($http_authorization != "Bearer {token}") {{ return 401; }}
    {chr(10).join(locations)}
  }}
}}
"""


def _client(base: str, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=base,
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT_S,
        limits=httpx.Limits(max_connections=200),
    )


def latencies_ms(readers: list[StreamClient], opened: float, closed: float) -> list[float]:
    return [
        (at - sent) * 1000
        for reader in readers
        for at, sent in reader.stamps
        if opened <= sent < closed
    ]


def check_runs(readers: list[StreamClient], expected: int, opened: float, closed: float) -> None:
    for reader in readers:
        stop = None if reader.settled is None else reader.settled.get("stop_reason")
        if stop != "completed":
            raise RuntimeError(f"session {reader.session_id} did not complete: {reader.settled}")
        if len(reader.stamps) != expected:
            raise RuntimeError(
                f"session {reader.session_id}: {len(reader.stamps)} markers, not {expected}"
            )
        sent = [s for _, s in reader.stamps]
        if not (min(sent) < opened and max(sent) >= closed):
            raise RuntimeError(f"session {reader.session_id} did not stream across the window")


async def refuse_elsewhere(
    backends: list[Backend], clients: list[httpx.AsyncClient], owner: int, session_id: str
) -> dict[str, Any]:
    """Ask a backend that does not hold `session_id` to open it: the lock's answer."""
    other = (owner + 1) % len(backends)
    response = await clients[other].post("/api/sessions", json={"resume": session_id})
    body = response.json()
    message = str(body.get("message", ""))
    return {
        "locked_status": response.status_code,
        "locked_error": body.get("error"),
        "locked_message": message,
        "locked_names_holder": f"pid {backends[owner].pid}" in message,
    }


async def hand_over(
    proxy: httpx.AsyncClient,
    clients: list[httpx.AsyncClient],
    owner: int,
    session_id: str,
) -> dict[str, Any]:
    """Close the session where it is, open it on the next backend, reconnect there."""
    state = (await proxy.get(f"/api/sessions/{session_id}")).json()["session"]
    last_seq = int(state["last_seq"])
    closed = await proxy.delete(f"/api/sessions/{session_id}")
    other = (owner + 1) % len(clients)
    reopened = await clients[other].post("/api/sessions", json={"resume": session_id})
    held = max(0, last_seq - 5)
    request = clients[other].build_request(
        "GET", f"/api/sessions/{session_id}/events", headers={"Last-Event-ID": str(held)}
    )
    response = await clients[other].send(request, stream=True)
    try:
        first = await SseReader(response).read_until("replay_gap", 10)
        gap = first.json()
    finally:
        await response.aclose()
    stale = await proxy.get(f"/api/sessions/{session_id}")
    await clients[other].delete(f"/api/sessions/{session_id}")
    return {
        "handover_close_status": closed.status_code,
        "handover_resume_status": reopened.status_code,
        "handover_last_event_id": held,
        "handover_first_event": gap["type"],
        "handover_missing": [gap["missing_first"], gap["missing_last"]],
        "stale_pin_status": stale.status_code,
        "stale_pin_error": stale.json().get("error"),
    }


async def kill_and_resume(
    backends: list[Backend], clients: list[httpx.AsyncClient]
) -> dict[str, Any]:
    """SIGKILL the first backend while a session of its own streams, then open that
    session on the second: the kernel must have let go of the lock, and a client that
    reconnects there with the last seq it read must be told of its gap."""
    victim, heir = clients[0], clients[1]
    created = await victim.post("/api/sessions", json={})
    session_id = str(created.json()["session"]["session_id"])
    request = victim.build_request("GET", f"/api/sessions/{session_id}/events")
    response = await victim.send(request, stream=True)
    reader = SseReader(response)
    try:
        await prompt(victim, session_id)
        await reader.read_until("message_update", TIMEOUT_S)
        await asyncio.sleep(0.5)
        backends[0].proc.kill()
        backends[0].proc.wait()
    finally:
        with contextlib.suppress(httpx.HTTPError):
            await response.aclose()
    seen = max(m.seq for m in reader.messages)
    reopened = await heir.post("/api/sessions", json={"resume": session_id})
    request = heir.build_request(
        "GET", f"/api/sessions/{session_id}/events", headers={"Last-Event-ID": str(seen)}
    )
    response = await heir.send(request, stream=True)
    try:
        gap = (await SseReader(response).read_until("replay_gap", 10)).json()
    finally:
        await response.aclose()
    shown = (await heir.get(f"/api/sessions/{session_id}")).json()
    await heir.delete(f"/api/sessions/{session_id}")
    return {
        "kill_session": session_id,
        "kill_resume_status": reopened.status_code,
        "kill_last_event_id": seen,
        "kill_first_event": gap["type"],
        "kill_missing": [gap["missing_first"], gap["missing_last"]],
        "kill_roles": [m.get("role") for m in shown["messages"]],
    }


async def misrouted(clients: list[httpx.AsyncClient], pins: dict[str, int], ids: list[str]) -> int:
    """Proxied sessions not open on exactly their pinned backend."""
    wrong = 0
    for session_id in ids:
        codes = [
            (await client.get(f"/api/sessions/{session_id}")).status_code for client in clients
        ]
        wanted = [200 if i == pins.get(session_id) else 404 for i in range(len(clients))]
        wrong += codes != wanted
    return wrong


def check_files(
    home: Path, markers: int, killed: str, unprompted: set[str]
) -> tuple[int, int, dict[str, Any]]:
    """Session files that read back whole: (those holding the prompt and the whole
    answer, with every one of its `markers` send-time markers, and nothing skipped; all
    of them but the `unprompted`; what the file of the session whose server was killed
    holds)."""
    from ink_tui.core.messages import AssistantMessage, UserMessage
    from ink_tui.session.session_reader import load_session

    files = sorted((home / "data" / "ink" / "sessions").glob("*/*.jsonl"))
    good, total, victim = 0, 0, {}
    for path in files:
        loaded = load_session(path)
        if loaded.id == killed:
            victim = {
                "kill_file_roles": [m.role for m in loaded.history],
                "kill_file_warnings": len(loaded.warnings),
                "kill_file_skipped_lines": len(loaded.skipped_lines),
            }
            continue
        if loaded.id in unprompted:
            continue
        total += 1
        history = loaded.history
        if (
            not loaded.warnings
            and not loaded.skipped_lines
            and len(history) == 2
            and isinstance(history[0], UserMessage)
            and isinstance(history[1], AssistantMessage)
            and len(MARKER.findall(history[1].text.encode())) == markers
        ):
            good += 1
    return good, total, victim


async def measure_once(
    front: str,
    count: int,
    sessions: int,
    direct: int,
    stream_s: float,
    warmup_s: float,
    window_s: float,
) -> Sample:
    load_start = os.getloadavg()
    with ModelServer() as model, tempfile.TemporaryDirectory(prefix="ink-bench-scale-") as tmp:
        root = Path(tmp)
        home, workspace = root / "home", root / "workspace"
        workspace.mkdir()
        url = stamped_url(model.root, stream_s, RATE, TICK_MS)
        backends = [Backend(url, home, workspace, root / f"serve{i}.log") for i in range(count)]
        proxy: ProxyProcess | NginxFront | HAProxyFront | None = None
        stops: list[tuple[float, bool, int]] = []
        try:
            await asyncio.gather(*(b.started() for b in backends))
            idle_rss = [vm_kib(b.pid, "VmHWM") / 1024 for b in backends]
            idle_fds = [b.fds() for b in backends]
            proxy = FRONTS[front](backends, root)
            result = await _drive(backends, proxy, model.pid, sessions, direct, warmup_s, window_s)
            result["front"] = proxy.name
            result["idle_rss_mib"] = idle_rss
            result["idle_fds"] = idle_fds
        finally:
            if proxy is not None:
                proxy.close()
            stops = [b.stop() for b in backends]
        markers = round(stream_s * 1000 / TICK_MS)
        files_ok, files, victim = check_files(
            home, markers, result["kill_session"], set(result.pop("extra_sessions"))
        )
        result.update(victim)
    load_end = os.getloadavg()
    readers, direct_readers = result.pop("readers"), result.pop("direct_readers")
    opened, closed = result.pop("opened"), result.pop("closed")
    expected = round(stream_s * 1000 / TICK_MS)
    check_runs(readers + direct_readers, expected, opened, closed)
    through = latencies_ms(readers, opened, closed)
    straight = latencies_ms(direct_readers, opened, closed)
    wall = closed - opened
    cpu = result.pop("cpu")
    deltas = len(through) + len(straight)
    backend_cpu = cpu["backends"]
    return {
        "backends": count,
        "sessions": sessions,
        "direct": direct,
        "rate": RATE,
        "tick_ms": TICK_MS,
        "stream_s": stream_s,
        "window_s": wall,
        "deltas": deltas,
        "p50_ms": percentile(through, 50),
        "p99_ms": percentile(through, 99),
        "max_ms": max(through),
        "direct_p50_ms": percentile(straight, 50),
        "direct_p99_ms": percentile(straight, 99),
        "proxy_added_p50_ms": percentile(through, 50) - percentile(straight, 50),
        "proxy_added_p99_ms": percentile(through, 99) - percentile(straight, 99),
        "backend_cpu_pct": [100 * c / wall for c in backend_cpu],
        "backend_cpu_max_pct": 100 * max(backend_cpu) / wall,
        "backend_us_per_delta": 1e6 * sum(backend_cpu) / deltas,
        "backend_wait_pct": [100 * w / wall for w in cpu["waits"]],
        "proxy_cpu_pct": 100 * cpu["proxy"] / wall,
        "proxy_us_per_delta": 1e6 * cpu["proxy"] / len(through),
        "model_cpu_pct": 100 * cpu["model"] / wall,
        "client_cpu_pct": 100 * cpu["self"] / wall,
        "client_lag_p99_ms": percentile(result.pop("lags"), 99),
        "rss_max_mib": max(result["rss_mib"]),
        # Over all backends: a front that places sessions at random loads them unevenly.
        "rss_per_session_mib": (sum(result["rss_mib"]) - sum(idle_rss)) / (sessions + direct),
        "fds_per_session": (sum(result["window_fds"]) - sum(result["idle_fds"]))
        / (sessions + direct),
        "stop_s": max(s for s, _, _ in stops),
        "killed": sum(k for _, k, _ in stops),
        "exit_codes": [c for _, _, c in stops],
        "files_ok": files_ok,
        "files": files,
        "load_start": list(load_start),
        "load_end": list(load_end),
        **result,
    }


async def _pinned_to_first(
    front: ProxyProcess | NginxFront | HAProxyFront, clients: list[httpx.AsyncClient]
) -> tuple[str, list[str]]:
    """A session the front pinned to the first backend (the one `kill_and_resume` kills),
    and the sessions opened to find one: one of those measured if there is one. HAProxy
    places a new session at random, so a few sessions may all have gone elsewhere (1 in
    16 quick runs: 4 sessions on 2 backends); each new one lands there with even odds.
    Those opened here never prompt: the files' check leaves them out."""
    extra: list[str] = []
    for _ in range(64):
        found = [sid for sid, index in front.pins.items() if index == 0]
        if found:
            return found[0], extra
        opened = await front.open(1, clients)
        extra += [reader.session_id for reader in opened]
        await asyncio.gather(*(reader.aclose() for reader in opened))
    raise RuntimeError("the front sent no new session to the first backend in 64 tries")


async def _drive(
    backends: list[Backend],
    front: ProxyProcess | NginxFront | HAProxyFront,
    model_pid: int,
    sessions: int,
    direct: int,
    warmup_s: float,
    window_s: float,
) -> dict[str, Any]:
    clients = [b.client() for b in backends]
    try:
        readers = await front.open(sessions, clients)
        # The direct sessions, each with the client of the backend it is open on.
        straight: list[tuple[httpx.AsyncClient, StreamClient]] = []
        for i, client in enumerate(clients):
            share = direct // len(clients) + (i < direct % len(clients))
            straight += [(client, r) for r in await open_streams(client, share)]
        direct_readers = [r for _, r in straight]
        everyone = readers + direct_readers
        tasks = [asyncio.create_task(r.run()) for r in everyone]
        try:
            await asyncio.gather(
                *(prompt(front.via(r.session_id), r.session_id) for r in readers),
                *(prompt(client, r.session_id) for client, r in straight),
            )
            pins = front.pins
            probe = readers[0].session_id
            refusal = await refuse_elsewhere(backends, clients, int(pins[probe]), probe)
            await asyncio.wait_for(
                asyncio.gather(*(r.first_delta.wait() for r in everyone)), TIMEOUT_S
            )
            # From the last stream's first write, by the model server's clock.
            started = max(r.stamps[0][1] for r in everyone)
            await asyncio.sleep(max(0.0, started + warmup_s - time.monotonic()))
            opened = time.monotonic()
            pids = [b.pid for b in backends]
            cpu0 = [process_cpu_s(p) for p in pids]
            wait0 = [b.runqueue_s() for b in backends]
            proxy0, model0 = front.cpu_s(), process_cpu_s(model_pid)
            self0 = time.process_time()
            lag = LoopLag()
            await lag.run(opened + window_s)
            closed = time.monotonic()
            window_fds = [b.fds() for b in backends]
            cpu = {
                "backends": [process_cpu_s(p) - c for p, c in zip(pids, cpu0, strict=True)],
                "waits": [b.runqueue_s() - w for b, w in zip(backends, wait0, strict=True)],
                "proxy": front.cpu_s() - proxy0,
                "model": process_cpu_s(model_pid) - model0,
                "self": time.process_time() - self0,
            }
            await asyncio.wait_for(asyncio.gather(*tasks), TIMEOUT_S)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*(r.aclose() for r in everyone))
        stats = await front.stats()
        pins = front.pins
        wrong = await misrouted(clients, pins, [r.session_id for r in readers])
        # And through the front: each proxied session must be found where it routes.
        for reader in readers:
            via = front.via(reader.session_id)
            wrong += (await via.get(f"/api/sessions/{reader.session_id}")).status_code != 200
        handover = await hand_over(front.via(probe), clients, int(pins[probe]), probe)
        for reader in readers:
            if reader.session_id != probe:
                await front.via(reader.session_id).delete(f"/api/sessions/{reader.session_id}")
        for client, reader in straight:
            await client.delete(f"/api/sessions/{reader.session_id}")
        # Peak RSS once every run has settled, before the first backend is killed.
        peak_rss = [vm_kib(b.pid, "VmHWM") / 1024 for b in backends]
        measured = dict(pins)
        dead, extra = await _pinned_to_first(front, clients)
        killed = await kill_and_resume(backends, clients)
        # What the front answers for a session pinned to the backend that was killed.
        try:
            answer = await front.via(dead).get(f"/api/sessions/{dead}")
            killed["dead_pin_status"] = answer.status_code
        except httpx.HTTPError as error:
            killed["dead_pin_status"] = type(error).__name__
    finally:
        await front.aclose()
        for client in clients:
            await client.aclose()
    return {
        "readers": readers,
        "direct_readers": direct_readers,
        "opened": opened,
        "closed": closed,
        "cpu": cpu,
        "lags": lag.lags_ms,
        "window_fds": window_fds,
        "misrouted": wrong,
        "by_hash": stats["by_hash"],
        "per_backend_sessions": [list(measured.values()).count(i) for i in range(len(backends))],
        "extra_sessions": extra,
        "relayed_reads": stats["relayed_reads"],
        **refusal,
        **handover,
        "rss_mib": peak_rss,
        **killed,
    }


FRONTS: dict[str, type[ProxyProcess] | type[NginxFront] | type[HAProxyFront]] = {
    "python": ProxyProcess,
    "nginx": NginxFront,
    "haproxy": HAProxyFront,
    "haproxy-delay": HAProxyDelayFront,
}


def measure(quick: bool, runs: int) -> dict[str, list[Any]]:
    if quick:
        args = ["--sessions", str(QUICK_SESSIONS), "--direct", str(QUICK_DIRECT)]
        args += ["--stream-seconds", str(QUICK_STREAM_S), "--warmup-seconds", str(QUICK_WARMUP_S)]
        args += ["--window-seconds", str(QUICK_WINDOW_S)]
    else:
        args = []
    return {"ink": [run_child("fig11_scaling", args) for _ in range(runs)]}


_MEDIANS = (
    "p50_ms",
    "p99_ms",
    "max_ms",
    "direct_p50_ms",
    "direct_p99_ms",
    "proxy_added_p50_ms",
    "proxy_added_p99_ms",
    "backend_cpu_max_pct",
    "backend_us_per_delta",
    "proxy_cpu_pct",
    "proxy_us_per_delta",
    "model_cpu_pct",
    "client_cpu_pct",
    "client_lag_p99_ms",
    "rss_max_mib",
    "rss_per_session_mib",
    "fds_per_session",
    "stop_s",
)
# Checks: the worst run counts (one refusal missed, one file damaged, is a failure).
_WORST = {
    "misrouted": max,
    "by_hash": max,
    "killed": max,
    "files_bad": max,
    "lock_refused": min,
    "handover_gap": min,
    "kill_resumed": min,
}


def summarize(samples: dict[str, list[Any]]) -> dict[str, float]:
    runs = samples["ink"]
    first = runs[0]
    summary: dict[str, float] = {
        "scaling_backends": first["backends"],
        "scaling_sessions": first["sessions"],
        "scaling_direct": first["direct"],
        "scaling_kbps": first["rate"] / 1024,
        "window_s": first["window_s"],
    }
    for key in _MEDIANS:
        summary[key] = median([run[key] for run in runs])
    derived = [
        {
            "misrouted": run["misrouted"],
            "by_hash": run["by_hash"] or 0,
            "killed": run["killed"],
            "files_bad": run["files"] - run["files_ok"],
            "lock_refused": int(
                run["locked_status"] == 409
                and run["locked_error"] == "locked"
                and run["locked_names_holder"]
            ),
            "handover_gap": int(
                run["handover_resume_status"] == 201 and run["handover_first_event"] == "replay_gap"
            ),
            "kill_resumed": int(
                run["kill_resume_status"] == 201
                and run["kill_first_event"] == "replay_gap"
                and run["kill_file_skipped_lines"] == 0
            ),
        }
        for run in runs
    ]
    for key, pick in _WORST.items():
        summary[key] = pick(d[key] for d in derived)
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backends", type=int, default=BACKENDS)
    parser.add_argument(
        "--front",
        choices=sorted(FRONTS),
        default="python",
        help="the proxy: benchmarks.affinity_proxy, or the system's nginx (prefix per backend)",
    )
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--direct", type=int, default=DIRECT)
    parser.add_argument("--stream-seconds", type=float, default=STREAM_S)
    parser.add_argument("--warmup-seconds", type=float, default=WARMUP_S)
    parser.add_argument("--window-seconds", type=float, default=WINDOW_S)
    parser.add_argument(
        "--quick", action="store_true", help="a few seconds: the sizes of the runner's --quick"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.sessions, args.direct = QUICK_SESSIONS, QUICK_DIRECT
        args.stream_seconds, args.warmup_seconds = QUICK_STREAM_S, QUICK_WARMUP_S
        args.window_seconds = QUICK_WINDOW_S
    if args.backends < 2 or args.sessions < 1 or args.direct < args.backends:
        parser.error("at least 2 backends, 1 proxied session and a direct one per backend")
    sample = asyncio.run(
        measure_once(
            args.front,
            args.backends,
            args.sessions,
            args.direct,
            args.stream_seconds,
            args.warmup_seconds,
            args.window_seconds,
        )
    )
    write_json(args.out, sample)


if __name__ == "__main__":
    main()
