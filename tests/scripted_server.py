"""A real loopback HTTP server that speaks OpenAI-compatible chat completions from a script.

Tests push replies in the order requests will arrive; each reply is a status, headers and
a list of steps (bytes to send, a pause, a gate the test opens, or a `Drop` that cuts the
connection mid-body). A reply may also hold its headers back (`before_headers`), as a
server still loading a model does. Every request body is recorded, so a test asserts on
exactly what the model would have received. The server notices when a client hangs up
mid-stream (`disconnects`).

It runs in a thread so it serves any event loop (pytest-asyncio's, Textual's) alike.

`quirks` make it behave like a real server that bends the protocol (`QUIRKS` says what
each does; `LLAMA_CPP_PYTHON` is llama-cpp-python's server as met in issue 20), and
`responders` answer the requests they recognise ahead of the scripted queue.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Pause:
    seconds: float


@dataclass
class Gate:
    """Holds the stream until the test calls `open()`; notes a hang-up meanwhile."""

    event: threading.Event = field(default_factory=threading.Event)
    reached: threading.Event = field(default_factory=threading.Event)

    def open(self) -> None:
        self.event.set()


@dataclass
class Drop:
    """Cut the connection here (a reset, no end of body): a server or proxy that died."""


Step = bytes | str | Pause | Gate | Drop

QUIRKS = {
    # Every tool-call fragment also goes out in the legacy `function_call` field.
    "function_call_copy": "tool-call fragments sent twice: in tool_calls[0] and function_call",
    # A message with `"content": null` is refused with HTTP 500 before any reply.
    "null_content_500": "a message whose content is null gets HTTP 500 (a validation error)",
    # A `\n` escape inside tool-call arguments goes out as a raw newline (grammar output).
    "raw_newline": "newline escapes in tool-call arguments sent as raw newlines",
}
# llama-cpp-python's server (its OpenAI-compatible `llama_cpp.server`).
LLAMA_CPP_PYTHON = ("function_call_copy", "null_content_500", "raw_newline")


@dataclass
class Reply:
    steps: list[Step]
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/event-stream"})
    # Send nothing and close the socket: a connection reset as the client sees it.
    drop_connection: bool = False
    # Held before the status line is sent: a server that accepted the request and is
    # still thinking (or stuck) before it answers at all.
    before_headers: Pause | Gate | None = None


def sse(obj: Any) -> str:
    return f"data: {json.dumps(obj)}\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict | None = None) -> str:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return sse(body)


def usage_chunk(prompt: int = 10, completion: int = 5) -> str:
    return sse(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
        }
    )


def text_reply(text: str, *, pieces: int = 3, done: bool = True, gate: Gate | None = None) -> Reply:
    """A plain answer streamed in `pieces` deltas; `gate` holds it after the first piece."""
    size = max(1, -(-len(text) // pieces))
    parts = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    steps: list[Step] = [chunk({"role": "assistant", "content": ""})]
    for index, part in enumerate(parts):
        steps.append(chunk({"content": part}))
        if index == 0 and gate is not None:
            steps.append(gate)
    steps.append(chunk({}, finish="stop"))
    steps.append(usage_chunk())
    if done:
        steps.append("data: [DONE]\n\n")
    return Reply(steps)


def tool_reply(
    calls: Iterable[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]],
    *,
    text: str = "",
    finish: str = "tool_calls",
    gate: Gate | None = None,
) -> Reply:
    """A reply that asks for tools; each call is (name, args[, id])."""
    steps: list[Step] = [chunk({"role": "assistant", "content": text or None})]
    if gate is not None:
        steps.append(gate)
    for index, call in enumerate(calls):
        name, args = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_{index}_{name}"
        arguments = json.dumps(args)
        half = len(arguments) // 2
        steps.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments[:half]},
                        }
                    ]
                }
            )
        )
        steps.append(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
        )
    steps.append(chunk({}, finish=finish))
    steps.append(usage_chunk())
    steps.append("data: [DONE]\n\n")
    return Reply(steps)


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "test_error"}})
    all_headers = {"Content-Type": "application/json"}
    all_headers.update(headers or {})
    return Reply([body], status=status, headers=all_headers)


class ScriptedServer:
    def __init__(self, port: int = 0, quirks: Iterable[str] = ()) -> None:
        self.quirks = frozenset(quirks)
        unknown = self.quirks - QUIRKS.keys()
        if unknown:
            raise ValueError(f"unknown quirks: {sorted(unknown)}; known: {sorted(QUIRKS)}")
        # Asked in turn for each request before the queue; the first reply given wins.
        self.responders: list[Callable[[dict[str, Any]], Reply | None]] = []
        # Requests refused by a quirk (never given a scripted reply), by index.
        self.refused: list[int] = []
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.disconnects: list[int] = []  # indexes of requests whose client hung up
        self.disconnected = threading.Event()
        # What `GET .../models` answers, and how often it was asked.
        self.models_listing: dict[str, Any] = {"data": [{"id": "scripted-model"}]}
        self.model_listings = 0
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    server.model_listings += 1
                    body = json.dumps(server.models_listing).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_error(404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with server._arrived:
                    index = len(server.requests)
                    server.requests.append(body)
                    server.request_headers.append(dict(self.headers.items()))
                    reply = server._refusal(body, index)
                    for responder in server.responders if reply is None else ():
                        reply = responder(body)
                        if reply is not None:
                            break
                    if reply is None and server._replies:
                        reply = server._replies.popleft()
                    server._arrived.notify_all()
                if reply is None:
                    reply = error_reply(
                        500, f"scripted server: no reply scripted for request {index}"
                    )
                server._serve(self, reply, index)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        # A short poll interval so close() (which waits for the next poll) takes
        # milliseconds, not the default half second, per test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        """Block until `count` requests have arrived (call via asyncio.to_thread)."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(f"expected {count} requests, got {len(self.requests)}")

    def close(self) -> None:
        for reply in self._replies:
            for step in [*reply.steps, reply.before_headers]:
                if isinstance(step, Gate):
                    step.open()
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- quirks ---------------------------------------------------------------------

    def _refusal(self, body: dict[str, Any], index: int) -> Reply | None:
        if "null_content_500" not in self.quirks:
            return None
        for position, message in enumerate(body.get("messages") or ()):
            if isinstance(message, dict) and "content" in message and message["content"] is None:
                self.refused.append(index)
                # As llama-cpp-python answers it: its pydantic models want a string.
                role = str(message.get("role", "")).capitalize()
                return error_reply(
                    500,
                    f"1 validation error for ChatCompletionRequest{role}Message\n"
                    f"messages.{position}.content\n  Input should be a valid string "
                    "[type=string_type, input_value=None, input_type=NoneType]",
                )
        return None

    def _quirky(self, step: bytes | str) -> bytes | str:
        """A data event as the quirks would have sent it."""
        text = step.decode() if isinstance(step, bytes) else step
        rewrites = self.quirks & {"function_call_copy", "raw_newline"}
        if not rewrites or not text.startswith("data: {"):
            return step
        obj = json.loads(text[len("data: ") :])
        for choice in obj.get("choices") or ():
            delta = choice.get("delta") or {}
            calls = delta.get("tool_calls") or []
            for call in calls:
                function = call.get("function") or {}
                if "raw_newline" in self.quirks and isinstance(function.get("arguments"), str):
                    function["arguments"] = function["arguments"].replace("\\n", "\n")
            if "function_call_copy" in self.quirks and calls:
                delta["function_call"] = dict(calls[0].get("function") or {})
        # The newline is raw in the arguments' JSON; the chunk's own JSON escapes it, as
        # a server's does, so the event itself stays valid.
        return sse(obj)

    # -- serving --------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler, reply: Reply, index: int) -> None:
        if reply.drop_connection:
            _reset(handler)
            return
        if reply.before_headers is not None:
            try:
                self._hold(handler.connection, reply.before_headers)
            except ConnectionResetError:
                self._note_hang_up(handler, index)
                return
        handler.send_response(reply.status)
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        streaming = reply.headers.get("Content-Type", "").startswith("text/event-stream")
        if streaming:
            handler.send_header("Transfer-Encoding", "chunked")
            handler.send_header("Cache-Control", "no-cache")
        else:
            body = b"".join(_as_bytes(s) for s in reply.steps if isinstance(s, (bytes, str)))
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
            return
        handler.end_headers()
        conn = handler.connection
        try:
            for step in reply.steps:
                if isinstance(step, Pause | Gate):
                    self._hold(conn, step)
                elif isinstance(step, Drop):
                    handler.wfile.flush()
                    _reset(handler)
                    return
                else:
                    data = _as_bytes(self._quirky(step) if self.quirks else step)
                    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (ConnectionResetError, BrokenPipeError):
            self._note_hang_up(handler, index)

    def _hold(self, conn: socket.socket, step: Pause | Gate) -> None:
        """Wait out a pause or a gate; ConnectionResetError if the client hangs up meanwhile."""
        if isinstance(step, Pause):
            if self._hung_up_within(conn, step.seconds):
                raise ConnectionResetError
            return
        step.reached.set()
        while not step.event.is_set():
            if self._hung_up_within(conn, 0.02):
                raise ConnectionResetError

    def _note_hang_up(self, handler: BaseHTTPRequestHandler, index: int) -> None:
        with self._lock:
            self.disconnects.append(index)
        self.disconnected.set()
        handler.close_connection = True

    @staticmethod
    def _hung_up_within(conn: socket.socket, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([conn], [], [], min(remaining, 0.02))
            if readable:
                try:
                    if conn.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except OSError:
                    return True
            if remaining <= 0:
                return False


def _reset(handler: BaseHTTPRequestHandler) -> None:
    # A zero linger time makes closing the socket send a reset instead of a clean end.
    handler.connection.setsockopt(
        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
    )
    handler.close_connection = True


def _as_bytes(step: bytes | str) -> bytes:
    return step if isinstance(step, bytes) else step.encode()
