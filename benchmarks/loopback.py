"""A loopback OpenAI-compatible streaming server, run as its own process.

A real model server is another process, so this one is too: on 2 cores it does not take
the GIL from the app being measured. The URL path picks the reply:

| path                                       | reply                                         |
| ------------------------------------------ | --------------------------------------------- |
| `/fast/<size>/v1/chat/completions`         | the `<size>`-character answer, as fast as the |
|                                            | socket takes it, one SSE event per 4 chars    |
| `/paced/<size>/<bytes_per_s>/v1/...`       | the same answer at `<bytes_per_s>`            |
| `/each/<size>/<deltas_per_s>/v1/...`       | the same answer, each SSE event in a write    |
|                                            | (and HTTP chunk) of its own, `TCP_NODELAY`,   |
|                                            | at `<deltas_per_s>` events per second         |
| `/bash/v1/chat/completions`                | a `bash` tool call running `BASH_COMMAND`,    |
|                                            | then (after the tool result) a short answer   |

`GET /log` returns what happened, each with the server's `time.monotonic()` (one clock for
every process on Linux): `first_byte`, `last_byte` and `hangup` (the client closed the
connection mid-stream), per request. The parent starts it with `LoopbackServer()`, which
reads the port from the first line the process prints.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import select
import socket
import sys
import threading
import time
import urllib.request
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.answer import DELTA_CHARS, deltas, make_answer
from benchmarks.common import ServerProcess

# Writes the group id, then sleeps with a child of its own (a subshell running sleep).
PGID_FILE = "bench.pgid"
BASH_COMMAND = f"echo $$ > {PGID_FILE}; (sleep 30; echo never) & sleep 30"

# Fast mode sends the pre-encoded stream in writes of about this many bytes.
_WRITE_BYTES = 16 * 1024
# Paced mode never waits less than this between two writes.
_MIN_WAIT_S = 0.0005
_PR_SET_TIMERSLACK = 29


def _event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    data = f"data: {json.dumps(body, separators=(',', ':'))}\n\n".encode()
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _closing() -> list[bytes]:
    usage = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10},
    }
    data = f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()
    return [
        _event({}, finish="stop"),
        f"{len(data):x}\r\n".encode() + data + b"\r\n",
        b"0\r\n\r\n",
    ]


@cache
def answer_events(size: int) -> list[bytes]:
    """The whole answer as HTTP chunks, one SSE event per delta, then the closing ones."""
    events = [_event({"role": "assistant", "content": ""})]
    events.extend(_event({"content": piece}) for piece in deltas(make_answer(size)))
    return events


def _tool_call_events() -> list[bytes]:
    call = {
        "index": 0,
        "id": "call_bench_bash",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": BASH_COMMAND})},
    }
    return [
        _event({"role": "assistant", "content": None}),
        _event({"tool_calls": [call]}),
        _event({}, finish="tool_calls"),
        *_closing()[1:],
    ]


class _Log:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[dict[str, Any]] = []
        self._requests = 0

    def next_request(self) -> int:
        with self._lock:
            self._requests += 1
            return self._requests

    def add(self, request: int, kind: str, path: str, **extra: Any) -> None:
        record = {"request": request, "kind": kind, "path": path, "t": time.monotonic()}
        record.update(extra)
        with self._lock:
            self.records.append(record)


def _hung_up(conn: socket.socket, wait: float) -> bool:
    """Whether the client closed its end, waiting up to `wait` seconds to find out."""
    readable, _, _ = select.select([conn], [], [], wait)
    if not readable:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _send_fast(conn: socket.socket, events: list[bytes], mark: Any) -> None:
    batch: list[bytes] = []
    size = 0
    first = True
    for event in events:
        batch.append(event)
        size += len(event)
        if size >= _WRITE_BYTES:
            if first:
                mark("first_byte")
                first = False
            conn.sendall(b"".join(batch))
            batch, size = [], 0
    if first:
        mark("first_byte")
    conn.sendall(b"".join(batch))


def _send_paced(conn: socket.socket, events: list[bytes], bytes_per_s: float, mark: Any) -> bool:
    """Send the content events at `bytes_per_s` of answer text; False if the client left."""
    interval = DELTA_CHARS / bytes_per_s
    total = len(events)
    sent = 0
    mark("first_byte")
    start = time.monotonic()
    while sent < total:
        due = min(total, int((time.monotonic() - start) / interval) + 1)
        if due > sent:
            conn.sendall(b"".join(events[sent:due]))
            sent = due
        if sent >= total:
            break
        wait = max(_MIN_WAIT_S, start + sent * interval - time.monotonic())
        if _hung_up(conn, wait):
            return False
    return True


def _send_each(conn: socket.socket, events: list[bytes], per_s: float, mark: Any) -> bool:
    """Send every event in a write of its own, `per_s` a second; False if the client left.

    As a real server streams: with `TCP_NODELAY` each write leaves as a segment of its
    own, so a client that keeps up reads one event at a time. A client that falls behind
    finds several in one read (the pacing never waits for it).

    Writes are spread evenly as far as the clock lets this thread sleep: with the
    default 50 us timer slack a short sleep takes about 150 us, and the events due
    meanwhile would leave back to back (a burst no client could read one by one), so the
    slack is set to 1 ns. Never a busy wait: it would take a core from the client. The
    `groups` record says how many times the server woke and wrote (the most separate
    reads any client could have made) and the CPU time the sending took.
    """
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    _fine_timer_slack()
    interval = 1 / per_s
    total = len(events)
    sent = 0
    groups = 0
    mark("first_byte")
    start = time.monotonic()
    cpu = time.thread_time()
    while sent < total:
        due = min(total, int((time.monotonic() - start) / interval) + 1)
        if due > sent:
            groups += 1
        while sent < due:
            conn.sendall(events[sent])
            sent += 1
        if sent >= total:
            break
        wait = start + sent * interval - time.monotonic()
        if wait > 0 and _hung_up(conn, wait):
            return False
    mark("groups", count=groups, cpu_s=time.thread_time() - cpu)
    return True


def _fine_timer_slack() -> None:
    """This thread's timer slack to 1 ns (Linux `PR_SET_TIMERSLACK`), where there is one."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_TIMERSLACK, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # elsewhere: coarser pacing, the `groups` record shows it


def make_handler(log: _Log) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.startswith("/log"):
                with log._lock:
                    body = json.dumps(log.records).encode()
                self._send_body(200, body, "application/json")
                return
            if self.path.rstrip("/").endswith("/models"):
                body = json.dumps({"data": [{"id": "bench-model"}]}).encode()
                self._send_body(200, body, "application/json")
                return
            self.send_error(404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            request = log.next_request()
            parts = self.path.strip("/").split("/")
            log.add(request, "request", self.path)
            try:
                if parts[0] == "fast":
                    self._stream(request, answer_events(int(parts[1])), None)
                elif parts[0] == "paced":
                    self._stream(request, answer_events(int(parts[1])), float(parts[2]))
                elif parts[0] == "each":
                    events = answer_events(int(parts[1]))
                    self._stream(request, events, float(parts[2]), each=True)
                elif parts[0] == "bash":
                    messages = json.loads(raw).get("messages", [])
                    if messages and messages[-1].get("role") == "tool":
                        self._stream(request, answer_events(64), None)
                    else:
                        self._stream(request, _tool_call_events(), None, closing=False)
                else:
                    self.send_error(404)
            except (BrokenPipeError, ConnectionResetError):
                log.add(request, "hangup", self.path)
                self.close_connection = True

        def _send_body(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(
            self,
            request: int,
            events: list[bytes],
            bytes_per_s: float | None,
            *,
            closing: bool = True,
            each: bool = False,
        ) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            conn = self.connection

            def mark(kind: str, **extra: Any) -> None:
                log.add(request, kind, self.path, **extra)

            if bytes_per_s is None:
                _send_fast(conn, events, mark)
            elif each:
                if not _send_each(conn, events, bytes_per_s, mark):
                    mark("hangup")
                    self.close_connection = True
                    return
            elif not _send_paced(conn, events, bytes_per_s, mark):
                mark("hangup")
                self.close_connection = True
                return
            if closing:
                conn.sendall(b"".join(_closing()))
            mark("last_byte")

    return Handler


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up is no error of the server's: figure 10 stops the bare
        # baseline after its time limit with the answer still unread, and the kernel
        # then resets the connection the handler waits on for a next request.
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)


def serve(port: int = 0, warm_sizes: tuple[int, ...] = ()) -> None:
    for size in warm_sizes:
        answer_events(size)
    log = _Log()
    httpd = _Server(("127.0.0.1", port), make_handler(log))
    httpd.daemon_threads = True
    print(f"PORT {httpd.server_address[1]}", flush=True)
    httpd.serve_forever(poll_interval=0.05)


class LoopbackServer(ServerProcess):
    """The server process, for the parent: `with LoopbackServer(sizes) as server: ...`."""

    def __init__(self, warm_sizes: tuple[int, ...] = ()) -> None:
        warm = [arg for size in warm_sizes for arg in ("--warm", str(size))]
        self.start("benchmarks.loopback", *warm, what="loopback server")

    def fast_url(self, size: int) -> str:
        return f"{self.root}/fast/{size}/v1"

    def paced_url(self, size: int, bytes_per_s: int) -> str:
        return f"{self.root}/paced/{size}/{bytes_per_s}/v1"

    def each_url(self, size: int, deltas_per_s: int) -> str:
        return f"{self.root}/each/{size}/{deltas_per_s}/v1"

    def bash_url(self) -> str:
        return f"{self.root}/bash/v1"


def fetch_log(root: str) -> list[dict[str, Any]]:
    """The server's log, from any process that knows its root URL."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{root}/log", timeout=5) as response:
        records: list[dict[str, Any]] = json.loads(response.read())
    return records


def last_record(root: str, kind: str, path_part: str = "") -> dict[str, Any] | None:
    for record in reversed(fetch_log(root)):
        if record["kind"] == kind and path_part in record["path"]:
            return record
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--warm", type=int, action="append", default=[])
    args = parser.parse_args(argv)
    serve(args.port, tuple(args.warm))


if __name__ == "__main__":
    main()
