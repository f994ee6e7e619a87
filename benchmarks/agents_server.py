"""The loopback model server for a parent and its sub-agents: figure 10's `task` tree.

`/agents/<count>/<seconds>/<commands>/v1/chat/completions` answers by who asks, told
apart by the request's first user message (a sub-agent's history starts with its prompt,
"bench sub-agent K"):

- the parent, first: one reply with `<count>` `task` calls at once, the K-th with the
  prompt "bench sub-agent K";
- sub-agent K, for K <= `<commands>`: a `bash` call running `agent_command(K)` (it writes
  its process group id to `bench-agent-K.pgid`, then sleeps with a child of its own, as
  figure 5's command does); once the result is in, a short answer;
- every other sub-agent: `<seconds>` of text at `RATE`, one write every `TICK_S`
  (`stamped_server.send_stamped`: `TCP_NODELAY`, one HTTP chunk of 4-character SSE
  deltas a write, as a real server flushes what its model wrote meanwhile), then the
  closing events;
- the parent, once the task results are in: a short answer.

A write every 10 ms per stream, not one per delta: eight streams of one write per delta
at 4 KB/s would be 8,000 writes a second, more than this Python server can pace beside
the app on 2 cores (`stamped_server`'s doc says the same of figure 7).

`GET /log` is the base server's: `request`, `first_byte`, `last_byte` and `hangup` (the
client closed the connection mid-stream), each with the server's `time.monotonic()`
and `agent` (K, or 0 for the parent). A module of its own, as `stamped_server` is,
reusing the base server's handler, log and framing.
"""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks.common import ServerProcess
from benchmarks.loopback import _closing, _event, _Log, answer_events, make_handler
from benchmarks.stamped_server import send_stamped

RATE = 4 * 1024
TICK_S = 0.01
SUB_PROMPT = "bench sub-agent "


def agent_command(agent: int) -> str:
    return f"echo $$ > {pgid_file(agent)}; (sleep 30; echo never) & sleep 30"


def pgid_file(agent: int) -> str:
    return f"bench-agent-{agent}.pgid"


def agents_url(root: str, count: int, seconds: float, commands: int) -> str:
    return f"{root}/agents/{count}/{seconds:g}/{commands}/v1"


def agent_of(messages: list[dict[str, Any]]) -> int:
    """K for sub-agent K's request, 0 for the parent's."""
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str) and content.startswith(SUB_PROMPT):
                return int(content[len(SUB_PROMPT) :].split()[0])
            return 0
    return 0


def _calls(calls: list[tuple[str, str, dict[str, Any]]]) -> bytes:
    """One reply asking for `calls` (id, tool, arguments), with the closing events."""
    events = [_event({"role": "assistant", "content": None})]
    for index, (call_id, name, arguments) in enumerate(calls):
        function = {"name": name, "arguments": json.dumps(arguments)}
        call = {"index": index, "id": call_id, "type": "function", "function": function}
        events.append(_event({"tool_calls": [call]}))
    events += [_event({}, finish="tool_calls"), *_closing()[1:]]
    return b"".join(events)


def task_calls(count: int) -> bytes:
    return _calls(
        [
            (
                f"call_bench_task_{k}",
                "task",
                {"description": f"bench task {k}", "prompt": f"{SUB_PROMPT}{k}"},
            )
            for k in range(1, count + 1)
        ]
    )


def bash_call(agent: int) -> bytes:
    return _calls([(f"call_bench_bash_{agent}", "bash", {"command": agent_command(agent)})])


def _reply(agent: int, answered: bool, count: int, commands: int) -> bytes | None:
    """The whole reply at once, or None for a sub-agent that streams text."""
    if answered:
        return b"".join([*answer_events(64), *_closing()])
    if agent == 0:
        return task_calls(count)
    if agent <= commands:
        return bash_call(agent)
    return None


def make_agents_handler(log: _Log) -> type[BaseHTTPRequestHandler]:
    base = make_handler(log)

    class Handler(base):  # type: ignore[misc, valid-type]
        def do_POST(self) -> None:
            parts = self.path.strip("/").split("/")
            if parts[0] != "agents":
                super().do_POST()
                return
            length = int(self.headers.get("Content-Length", "0"))
            messages = json.loads(self.rfile.read(length)).get("messages", [])
            count, seconds, commands = int(parts[1]), float(parts[2]), int(parts[3])
            agent = agent_of(messages)
            answered = bool(messages) and messages[-1].get("role") == "tool"
            request = log.next_request()
            log.add(request, "request", self.path, agent=agent)

            def mark(kind: str) -> None:
                log.add(request, kind, self.path, agent=agent)

            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                reply = _reply(agent, answered, count, commands)
                if reply is not None:
                    mark("first_byte")
                    self.connection.sendall(reply)
                    mark("last_byte")
                    return
                if not send_stamped(self.connection, seconds, RATE, TICK_S, mark):
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
    httpd = ThreadingHTTPServer(("127.0.0.1", port), make_agents_handler(_Log()))
    httpd.daemon_threads = True
    print(f"PORT {httpd.server_address[1]}", flush=True)
    httpd.serve_forever(poll_interval=0.05)


class AgentsServer(ServerProcess):
    """The server process: `with AgentsServer() as server: agents_url(server.root, ...)`."""

    def __init__(self) -> None:
        self.start("benchmarks.agents_server", what="sub-agents server")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    serve(args.port)


if __name__ == "__main__":
    main()
