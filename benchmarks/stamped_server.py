"""The loopback model server of `benchmarks.loopback`, plus answers that carry their send time.

Figure 7 measures the time from the model server's byte to the SSE event that carries
it. So the text itself holds the moment it left: every write of a `/stamped/` answer
starts with a marker `<t=SECONDS>`, `time.monotonic()` taken just before the write (one
clock for every process on Linux), and the client that finds the marker in an event
subtracts it from its own clock.

`/stamped/<seconds>/<bytes_per_s>/<tick_ms>/v1/chat/completions` streams for `<seconds>`,
one write each `<tick_ms>` (`TCP_NODELAY`): one HTTP chunk holding the marker's SSE
event and 4-character deltas, `<bytes_per_s>` of answer text in all (the marker counts).

`/tools/<count>/v1/chat/completions` asks for `<count>` `ls` calls at once (read-only, so
they run side by side), then, once their results are in, answers with a short text.
Every other path is answered as by `benchmarks.loopback`.

A write every 10 ms is a server that flushes what its model produced meanwhile: an SSE
event per token, one HTTP chunk per flush. (One write and chunk per 4-character delta at
8 KB/s would be 2,000 a second per session, 40,000 for 20 sessions: more than this
Python server can pace, and what `/each/` measures for one stream.) Each write is one
network batch, so all of its text left at the marker's time.

It is a module of its own (not a branch of `loopback.py`) so that the two can change
independently; it reuses that server's handler, log and framing.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import time
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.answer import DELTA_CHARS
from benchmarks.common import ServerProcess
from benchmarks.loopback import _closing, _event, _hung_up, _Log, answer_events, make_handler

# The marker as it appears in the answer text (and so in the SSE event's JSON: none of
# its characters is escaped by json.dumps).
MARKER = re.compile(rb"<t=(\d+\.\d+)>")
_FILLER = "the quick model streams words to many sessions at once and none waits. "


def marker(at: float) -> str:
    return f"<t={at:.6f}>"


@cache
def _sse(content: str) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
    }
    return f"data: {json.dumps(body, separators=(',', ':'))}\n\n".encode()


def _tick_body(at: float, text_bytes: int, offset: int) -> tuple[bytes, int]:
    """One write: one HTTP chunk holding the marker's SSE event and 4-character deltas,
    `text_bytes` of text in all."""
    stamp = marker(at)
    # The filler's few distinct pieces are encoded once (cached): the pacing thread of
    # 20 streams must not take the CPU the server under test needs.
    events = [_sse.__wrapped__(stamp)]
    left = max(0, text_bytes - len(stamp))
    while left > 0:
        size = min(DELTA_CHARS, left)
        piece = (_FILLER * 2)[offset % len(_FILLER) :][:size]
        events.append(_sse(piece))
        offset += size
        left -= size
    data = b"".join(events)
    return f"{len(data):x}\r\n".encode() + data + b"\r\n", offset


def send_stamped(
    conn: socket.socket, seconds: float, bytes_per_s: float, tick_s: float, mark: Any
) -> bool:
    """Stream for `seconds`, one stamped write per `tick_s`; False if the client left.

    The ticks keep to a fixed schedule from the start (a late one does not push the rest
    back), and each write is one segment (`TCP_NODELAY`)."""
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.sendall(_event({"role": "assistant", "content": ""}))
    ticks = max(1, round(seconds / tick_s))
    per_tick = max(1, round(bytes_per_s * tick_s))
    offset = 0
    mark("first_byte")
    start = time.monotonic()
    for tick in range(ticks):
        wait = start + tick * tick_s - time.monotonic()
        if wait > 0 and _hung_up(conn, wait):
            return False
        now = time.monotonic()
        body, offset = _tick_body(now, per_tick, offset)
        conn.sendall(body)
    return True


def tool_call_events(count: int) -> bytes:
    """One reply asking for `count` `ls` calls, as HTTP chunks, with the closing ones."""
    calls = [
        {
            "index": index,
            "id": f"call_bench_ls_{index}",
            "type": "function",
            "function": {"name": "ls", "arguments": json.dumps({"path": "."})},
        }
        for index in range(count)
    ]
    events = [_event({"role": "assistant", "content": None})]
    events += [_event({"tool_calls": [call]}) for call in calls]
    events += [_event({}, finish="tool_calls"), *_closing()[1:]]
    return b"".join(events)


def make_stamped_handler(log: _Log) -> type[BaseHTTPRequestHandler]:
    base = make_handler(log)

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            parts = self.path.strip("/").split("/")
            if parts[0] not in ("stamped", "tools"):
                super().do_POST()
                return
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            request = log.next_request()
            log.add(request, "request", self.path)

            def mark(kind: str) -> None:
                log.add(request, kind, self.path)

            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                if parts[0] == "tools":
                    messages = json.loads(raw).get("messages", [])
                    if messages and messages[-1].get("role") == "tool":
                        reply = b"".join([*answer_events(64), *_closing()])
                    else:
                        reply = tool_call_events(int(parts[1]))
                    mark("first_byte")
                    self.connection.sendall(reply)
                    mark("last_byte")
                    return
                seconds, rate, tick_ms = float(parts[1]), float(parts[2]), float(parts[3])
                if not send_stamped(self.connection, seconds, rate, tick_ms / 1000, mark):
                    mark("hangup")
                    self.close_connection = True
                    return
                self.connection.sendall(b"".join(_closing()))
                mark("last_byte")
            except (BrokenPipeError, ConnectionResetError):
                mark("hangup")
                self.close_connection = True

    return Handler


def serve(port: int = 0) -> None:
    httpd = ThreadingHTTPServer(("127.0.0.1", port), make_stamped_handler(_Log()))
    httpd.daemon_threads = True
    print(f"PORT {httpd.server_address[1]}", flush=True)
    httpd.serve_forever(poll_interval=0.05)


class StampedServer(ServerProcess):
    """The server process: `with StampedServer() as server: server.stamped_url(...)`."""

    def __init__(self) -> None:
        self.start("benchmarks.stamped_server", what="stamped server")


def stamped_url(root: str, seconds: float, bytes_per_s: int, tick_ms: float) -> str:
    return f"{root}/stamped/{seconds:g}/{bytes_per_s}/{tick_ms:g}/v1"


def tools_url(root: str, count: int) -> str:
    return f"{root}/tools/{count}/v1"


def each_url(root: str, size: int, deltas_per_s: int) -> str:
    return f"{root}/each/{size}/{deltas_per_s}/v1"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    serve(args.port)


if __name__ == "__main__":
    main()
