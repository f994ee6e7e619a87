"""RPC mode against a hostile driver, through the real process: strict JSON in (deep
nesting, NaN) and out (a model's NaN arguments), and an exit signal that comes while
ink is still starting."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.rpc_pipes import RawInk, clean_env, signals_caught
from tests.scripted_server import (
    Reply,
    ScriptedServer,
    Step,
    chunk,
    text_reply,
    usage_chunk,
)


def test_a_line_nested_100000_deep_and_a_nan_id_are_answered_and_survived(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    ink = RawInk(server, workspace, clean_env(tmp_path), "--no-session")
    try:
        ink.send("[" * 100_000)
        ink.send('{"type": "get_state", "id": NaN}')
        ink.send('{"type": "get_state", "id": [[[[' + "[" * 300 + "]" * 304 + "}")
        ink.send({"type": "get_state", "id": "after"})
        lines = ink.read_until(lambda line: line.get("id") == "after")
        deep, nan, deep_id, after = [line for line in lines if line["type"] == "response"]
        assert deep["command"] == "parse" and deep["success"] is False
        assert "nested deeper than" in deep["error"] and "id" not in deep
        # Refused as not JSON, never echoed as a bare NaN.
        assert nan["command"] == "parse" and "NaN is not JSON" in nan["error"]
        assert "id" not in nan and b"NaN," not in ink.raw_lines[-3]
        assert "nested deeper than" in deep_id["error"]
        assert after["success"] is True and after["data"]["busy"] is False
        ink.close_stdin()
        assert ink.wait() == 0
        assert "Traceback" not in ink.stderr()
    finally:
        ink.kill()


def test_a_models_overflowing_numbers_are_refused_and_nothing_goes_out_unstrict(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    # `1e999` is a JSON number that no float holds: Python reads it as Infinity, which
    # ink once wrote back as a bare `Infinity` token in events and get_messages. Now the
    # call's arguments are refused (the model reads why) and every line stays strict.
    arguments = '{"path": "README.md", "offset": 1e999, "x": [-1e400]}'
    call = {"index": 0, "id": "c1", "type": "function"}
    call["function"] = {"name": "read", "arguments": arguments}
    steps: list[Step] = [chunk({"role": "assistant", "content": None})]
    steps += [chunk({"tool_calls": [call]}), chunk({}, finish="tool_calls"), usage_chunk()]
    server.push(Reply([*steps, "data: [DONE]\n\n"]), text_reply("done"))
    ink = RawInk(server, workspace, clean_env(tmp_path))
    try:
        ink.send({"type": "prompt", "message": "read it", "id": "p"})
        # Every line is parsed strictly by `read_until`: one bare token fails the test.
        events = ink.read_until(lambda line: line["type"] == "agent_settled")
        [end] = [e for e in events if e["type"] == "tool_execution_end"]
        assert end["is_error"] is True
        assert "1e999 is out of the range of a float" in json.dumps(end)
        # The model read why, in its next request.
        sent = json.dumps(server.requests[1]["messages"])
        assert "1e999 is out of the range of a float" in sent
        ink.send({"type": "get_messages", "id": "m"})
        [messages] = ink.read_until(lambda line: line.get("id") == "m")
        assert messages["success"] is True
        # A command whose id overflows is refused as not JSON, never echoed as a token.
        ink.send('{"type": "get_state", "id": 1e999}')
        [refused] = ink.read_until(lambda line: line["type"] == "response")
        assert refused["success"] is False and "id" not in refused
        assert "out of the range of a float" in refused["error"]
        ink.close_stdin()
        assert ink.wait() == 0
    finally:
        ink.kill()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_sigterm_as_soon_as_ink_takes_it_exits_143(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    """Not a race against a clock: each time, SIGTERM goes the moment ink has a handler
    for it at all, the earliest a signal can be anything but fatal."""
    env = clean_env(tmp_path)
    argv = [sys.executable, "-m", "ink_tui", "--mode", "rpc", "--no-session"]
    argv += ["--base-url", server.base_url, "--model", "m", "--api-key", "k"]
    for _ in range(3):
        process = subprocess.Popen(
            argv, cwd=workspace, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 30
            while signal.SIGTERM not in signals_caught(process.pid):
                assert process.poll() is None, "ink exited before it took SIGTERM"
                assert time.monotonic() < deadline, "ink never took SIGTERM"
                time.sleep(0.0005)
            process.send_signal(signal.SIGTERM)
            out, _ = process.communicate(timeout=30)
            assert process.returncode == 143, (process.returncode, out[-500:])
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(30)
