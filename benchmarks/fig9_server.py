"""Figure 9's scripted model server: reads a whole (big) request, answers with a short reply.

Run as its own process (`Fig9Server()`), like `benchmarks.loopback`: a real server is
another process. `POST .../chat/completions` reads the body whatever its framing
(`Content-Length` or chunked), parses it, and streams a short answer holding
`REPLY_WORD` (which nothing else on screen holds). `GET .../models` lists `bench-model`
with no context window (so the app compacts nothing on its own); `GET /log` returns, per
request, the body's size in bytes and how many messages it carried: the figure checks
that the whole history was sent.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.common import ServerProcess
from benchmarks.loopback import _closing, _event

REPLY_WORD = "QZXJREPLYSHOWN"
REPLY = f"Read the whole history; the next step is clear. {REPLY_WORD}"


def _read_chunked(handler: BaseHTTPRequestHandler) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
        if size == 0:
            while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return b"".join(parts)
        parts.append(handler.rfile.read(size))
        handler.rfile.readline()


def make_handler(records: list[dict[str, Any]], lock: threading.Lock) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.startswith("/log"):
                with lock:
                    self._send(json.dumps(records).encode())
            elif self.path.rstrip("/").endswith("/models"):
                self._send(json.dumps({"data": [{"id": "bench-model"}]}).encode())
            else:
                self.send_error(404)

        def do_POST(self) -> None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = _read_chunked(self)
            else:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            messages = json.loads(raw).get("messages", [])
            with lock:
                records.append({"bytes": len(raw), "messages": len(messages)})
            del raw, messages
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [_event({"role": "assistant", "content": ""})]
            events += [_event({"content": REPLY[i : i + 8]}) for i in range(0, len(REPLY), 8)]
            self.wfile.write(b"".join([*events, *_closing()]))
            self.wfile.flush()

    return Handler


def serve() -> None:
    records: list[dict[str, Any]] = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(records, threading.Lock()))
    httpd.daemon_threads = True
    print(f"PORT {httpd.server_address[1]}", flush=True)
    httpd.serve_forever(poll_interval=0.05)


class Fig9Server(ServerProcess):
    """`with Fig9Server() as server: server.url`, then `server.log()`."""

    def __init__(self) -> None:
        self.start("benchmarks.fig9_server", what="figure 9 server")
        self.url = f"{self.root}/v1"

    def log(self) -> list[dict[str, Any]]:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{self.root}/log", timeout=10) as response:
            records: list[dict[str, Any]] = json.loads(response.read())
        return records


if __name__ == "__main__":
    serve()
