"""RPC mode with a driver that stops reading stdout, through the real process: a signal
while the pipe is full cuts no line, and a reader that stays away never blocks the run
(the server is never blamed for a stall of ours; the deltas merge and still add up)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.rpc_pipes import RawInk, clean_env, covered
from tests.scripted_server import (
    Gate,
    Pause,
    Reply,
    ScriptedServer,
    Step,
    chunk,
    text_reply,
    usage_chunk,
)


def _long_reply(pieces: int, size: int, gate: Gate, pause: float = 0.0) -> tuple[Reply, str]:
    """A streamed answer of `pieces` distinct deltas of `size` characters; `gate` (held
    unless opened first) comes before its end."""
    texts = [f"<{n}>" + "abcdefghij"[n % 10] * size for n in range(pieces)]
    steps: list[Step] = [chunk({"role": "assistant", "content": ""})]
    for text in texts:
        steps.append(chunk({"content": text}))
        if pause:
            steps.append(Pause(pause))
    steps += [gate, chunk({}, finish="stop"), usage_chunk(), "data: [DONE]\n\n"]
    return Reply(steps), "".join(texts)


def _wait_full(ink: RawInk, within: float = 30.0) -> None:
    """Until ink's stdout pipe holds (nearly) all it can: its next write blocks."""
    deadline = time.monotonic() + within
    room = ink.pipe_size() - 8192
    while ink.waiting_bytes() < room:
        assert ink.process.poll() is None, ink.stderr()
        assert time.monotonic() < deadline, f"the pipe never filled ({ink.waiting_bytes()})"
        time.sleep(0.005)


def test_sigterm_while_stdout_is_full_cuts_no_line(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    # Three times: a signal cut a line only when it came in the middle of a write (most
    # runs, not all); each time every line must be whole.
    for _ in range(3):
        gate = Gate()  # never opened: the signal ends the run
        reply, _ = _long_reply(400, 5000, gate)
        server.push(reply)
        ink = RawInk(server, workspace, clean_env(tmp_path), "--no-session")
        try:
            ink.send({"type": "prompt", "message": "write a lot", "id": "p"})
            _wait_full(ink)
            ink.process.send_signal(signal.SIGTERM)
            # Every line strictly parsed as it is read: a cut or glued line fails here.
            lines = ink.read_until(lambda line: False, within=60)
            assert ink.wait() == 143, ink.stderr()
            events = [line for line in lines if line["type"] != "response"]
            assert covered(events) == list(range(1, events[-1]["seq"] + 1))
            assert events[-1]["type"] == "agent_settled"
            assert events[-1]["stop_reason"] == "aborted"
        finally:
            ink.kill()


def test_a_reader_that_stays_away_never_blocks_the_run_nor_blames_the_server(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    idle_s = 1.0
    gate = Gate()
    gate.open()  # not a hold (that would be the server's own silence): a mark
    # ~1.2 MB streamed over a few seconds, longer than the idle limit, in small pauses
    # the limit allows: the server is never silent for `idle_s`. Then a tool call: it
    # runs only if the run goes on while nobody reads ink's stdout.
    reply, text = _long_reply(60, 20_000, gate, pause=0.03)
    call = {"index": 0, "id": "c1", "type": "function"}
    call["function"] = {"name": "bash", "arguments": '{"command": "touch ran-while-away"}'}
    reply.steps[-3:] = [chunk({"tool_calls": [call]}), chunk({}, finish="tool_calls")]
    reply.steps += [usage_chunk(), "data: [DONE]\n\n"]
    server.push(reply, text_reply("done"))
    marker = workspace / "ran-while-away"
    env = clean_env(tmp_path, INK_STREAM_IDLE_TIMEOUT_S=str(idle_s))
    ink = RawInk(server, workspace, env)
    try:
        ink.send({"type": "prompt", "message": "write a lot", "id": "p"})
        # The reader stays away while the whole answer streams and its tool runs.
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        ran_while_away = marker.exists()
        assert ink.waiting_bytes() > 0  # nothing was read meanwhile
        time.sleep(idle_s * 1.5)  # the slow reader itself, not a wait for a condition
        lines = ink.read_until(lambda line: line["type"] == "agent_settled", within=60)
        said = [line for line in lines if "stall" in str(line)]
        assert not said, said[:1]
        assert ran_while_away, "the run stopped while nobody read ink's stdout"
        assert gate.reached.is_set() and lines[-1]["stop_reason"] == "completed"
        updates = [line for line in lines if line["type"] == "message_update"]
        assert "".join(u["delta"]["text"] for u in updates) == text + "done"
        assert any("seq_first" in u for u in updates)  # the reader was behind: merged
        ends = [line for line in lines if line["type"] == "message_end"]
        assert [end["message"]["text"] for end in ends] == [text, "done"]
        events = [line for line in lines if line["type"] != "response"]
        assert covered(events) == list(range(1, events[-1]["seq"] + 1))
        ink.close_stdin()
        assert ink.wait() == 0
    finally:
        ink.kill()
