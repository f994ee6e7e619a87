"""Figure 11's model server: `benchmarks.stamped_server`'s `/stamped/` answers, for 100
streams at once, paced by one thread on one clock.

The stamped server gives each stream a thread that sleeps in `select()` between its
writes: at 100 streams of a write per 20 ms that is 5,000 wake-ups a second of threads
contending for one GIL, about 40 % of a core on a 2-core box where `ink serve` is the
process being measured. Here the HTTP handler threads only read the request and send
the headers; then one pacing thread writes every stream's ticks from a heap of due
times, each tick on the stream's fixed schedule from its start (a late tick does not
push the rest back). Each write is `stamped_server`'s tick: one HTTP chunk (`TCP_NODELAY`)
holding the `<t=SECONDS>` marker, taken just before the write, and 4-character deltas.

A stream whose client left (a failed write) ends there. A write that would block (a
client not reading) would hold up the others: at 1 KB/s per stream the socket buffers
are far from full, and a late tick shows as latency, never as a lost one.

The listen queue is deep (1,024): the stock `ThreadingHTTPServer` queues 5 connections,
so the 6th of a burst has its SYN dropped and connects a second later (TCP's
retransmission), and 100 sessions' streams would start seconds apart.
"""

from __future__ import annotations

import heapq
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The benchmark's own framing, shared with the other model servers of this package.
from benchmarks.common import ServerProcess
from benchmarks.loopback import _closing, _event, _Log
from benchmarks.stamped_server import _tick_body, make_stamped_handler


@dataclass
class _Stream:
    conn: socket.socket
    start: float
    tick_s: float
    ticks: int
    per_tick: int
    done: threading.Event = field(default_factory=threading.Event)
    sent: int = 0
    offset: int = 0
    ok: bool = True


class Pacer:
    """One thread writing every stream's ticks when they fall due."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, _Stream]] = []
        self._added = threading.Condition()
        self._count = 0
        threading.Thread(target=self._run, name="pacer", daemon=True).start()

    def stream(
        self, conn: socket.socket, seconds: float, bytes_per_s: float, tick_s: float
    ) -> bool:
        """Stream for `seconds` from now; returns once done, False if the client left."""
        stream = _Stream(
            conn,
            time.monotonic(),
            tick_s,
            max(1, round(seconds / tick_s)),
            max(1, round(bytes_per_s * tick_s)),
        )
        with self._added:
            self._push(stream.start, stream)
            self._added.notify()
        stream.done.wait()
        return stream.ok

    def _push(self, due: float, stream: _Stream) -> None:
        self._count += 1
        heapq.heappush(self._due, (due, self._count, stream))

    def _run(self) -> None:
        while True:
            with self._added:
                while not self._due or self._due[0][0] > time.monotonic():
                    wait = self._due[0][0] - time.monotonic() if self._due else None
                    self._added.wait(wait)
                _, _, stream = heapq.heappop(self._due)
            body, stream.offset = _tick_body(time.monotonic(), stream.per_tick, stream.offset)
            try:
                stream.conn.sendall(body)
            except OSError:
                stream.ok = False
                stream.done.set()
                continue
            stream.sent += 1
            if stream.sent == stream.ticks:
                stream.done.set()
                continue
            with self._added:
                self._push(stream.start + stream.sent * stream.tick_s, stream)


def make_paced_handler(log: _Log, pacer: Pacer) -> type[BaseHTTPRequestHandler]:
    base = make_stamped_handler(log)

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            parts = self.path.strip("/").split("/")
            if parts[0] != "stamped":
                super().do_POST()
                return
            json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            request = log.next_request()
            log.add(request, "request", self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            seconds, rate, tick_ms = float(parts[1]), float(parts[2]), float(parts[3])
            try:
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.connection.sendall(_event({"role": "assistant", "content": ""}))
                log.add(request, "first_byte", self.path)
                if pacer.stream(self.connection, seconds, rate, tick_ms / 1000):
                    self.connection.sendall(b"".join(_closing()))
                    log.add(request, "last_byte", self.path)
                    return
            except (BrokenPipeError, ConnectionResetError):
                pass
            log.add(request, "hangup", self.path)
            self.close_connection = True

    return Handler


class _DeepQueueServer(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True


def serve() -> None:
    httpd = _DeepQueueServer(("127.0.0.1", 0), make_paced_handler(_Log(), Pacer()))
    print(f"PORT {httpd.server_address[1]}", flush=True)
    httpd.serve_forever(poll_interval=0.05)


class ModelServer(ServerProcess):
    """`with ModelServer() as model: stamped_url(model.root, ...)`; `model.pid` for its CPU."""

    def __init__(self) -> None:
        self.start("benchmarks.serve_model", what="figure 11 model server")

    @property
    def pid(self) -> int:
        return self._proc.pid


if __name__ == "__main__":
    serve()
