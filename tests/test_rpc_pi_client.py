"""`ink --mode rpc --rpc-dialect pi`, driven by pi's own `RpcClient` from npm.

pi's client starts `node <cliPath> --mode rpc <args>`; cliPath is our shim
(tests/pi_client/ink-shim.mjs), which runs ink in pi's dialect. The Node script
(tests/pi_client/drive.mjs) does each scenario's steps with the client and prints what
they returned; these tests check it, and what the scripted model server received.
Skipped, saying why, only where npm cannot reach its registry (tests/pi_client/install.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.pi_client.install import node_bin, pi_client_dir
from tests.rpc_process import isolated_env, scripted_args
from tests.scripted_server import ScriptedServer, text_reply, tool_reply

HERE = Path(__file__).parent / "pi_client"
WITHIN = 120.0


@pytest.fixture(scope="module")
def npm_dir() -> Path:
    folder, reason = pi_client_dir()
    if folder is None:
        pytest.skip(reason)
    return folder


@pytest.fixture
def server() -> Any:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def drive(npm_dir: Path, tmp_path: Path, server: ScriptedServer, scenario: str) -> dict[str, Any]:
    """Run one scenario of drive.mjs against ink in tmp_path/ws; its JSON result."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = isolated_env(tmp_path)
    env["PATH"] = f"{node_bin(npm_dir)}{os.pathsep}{env.get('PATH', '')}"
    config = {
        "npmDir": str(npm_dir),
        "shim": str(HERE / "ink-shim.mjs"),
        "python": sys.executable,
        "cwd": str(workspace),
        "args": scripted_args(server),
        "gate": str(workspace / "gate"),
        "pidFile": str(workspace / "pid"),
    }
    done = subprocess.run(
        ["node", str(HERE / "drive.mjs"), scenario, json.dumps(config)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=WITHIN,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"], result.get("error", "") + "\n" + done.stderr
    # RpcClient.stop() sent SIGTERM: ink settled and exited, nothing of it is left.
    assert result["inkPid"] is not None
    assert _gone(result["inkPid"]), f"ink (pid {result['inkPid']}) is still running"
    return result


def _gone(pid: int) -> bool:
    """Whether `pid` has exited within 30 s. A zombie has: on a busy machine RpcClient's
    stop may kill the shim before ink exits, and ink, orphaned, then waits to be reaped by
    whatever adopts it (a subreaper in this test process, which never waits for it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped here if this process adopted it
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if _state(pid) in ("Z", "X", None):
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_prompt_and_wait_for_idle(npm_dir: Path, tmp_path: Path, server: ScriptedServer) -> None:
    server.push(text_reply("Hello there, pi."))
    result = drive(npm_dir, tmp_path, server, "prompt")

    collected = result["collected"]
    types = _types(collected)
    assert types[0] == "agent_start"
    assert types[-1] == "agent_settled"
    assert types.count("agent_settled") == 1
    assert collected[-1]["aborted"] is False
    # pi's order: the user's message, then the reply streamed and ended, then the ends.
    assert types.index("turn_start") < types.index("message_start")
    assert types.index("turn_end") < types.index("agent_end") < types.index("agent_settled")
    updates = [e["assistantMessageEvent"] for e in collected if e["type"] == "message_update"]
    assert updates[0]["type"] == "text_start"
    assert "".join(u["delta"] for u in updates if u["type"] == "text_delta") == "Hello there, pi."
    assert updates[-1] == {"type": "text_end", "contentIndex": 0, "content": "Hello there, pi."}
    ends = [e["message"] for e in collected if e["type"] == "message_end"]
    assert [m["role"] for m in ends] == ["user", "assistant"]
    assert ends[0]["content"] == [{"type": "text", "text": "say hello"}]
    assert ends[1]["content"] == [{"type": "text", "text": "Hello there, pi."}]
    assert ends[1]["stopReason"] == "stop"
    turn_end = next(e for e in collected if e["type"] == "turn_end")
    assert turn_end["message"]["content"] == ends[1]["content"]
    assert turn_end["toolResults"] == []
    agent_end = next(e for e in collected if e["type"] == "agent_end")
    assert agent_end["willRetry"] is False
    assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant"]

    state = result["state"]
    assert state["isStreaming"] is False
    assert state["model"]["id"] == "scripted-model"
    assert state["steeringMode"] == "all"
    assert state["followUpMode"] == "one-at-a-time"
    assert state["messageCount"] == 2
    assert state["pendingMessageCount"] == 0
    assert state["sessionFile"].endswith(".jsonl")

    assert [m["role"] for m in result["messages"]] == ["user", "assistant"]
    assert result["lastText"] == "Hello there, pi."
    stats = result["stats"]
    assert (stats["userMessages"], stats["assistantMessages"], stats["totalMessages"]) == (1, 1, 2)
    assert stats["tokens"]["output"] == 5
    assert result["commands"] == []
    assert [m["text"] for m in result["forkMessages"]] == ["say hello"]
    assert result["unknown"] == "Unknown command: no_such_command"


def test_steer_and_follow_up_during_a_tool_call(
    npm_dir: Path, tmp_path: Path, server: ScriptedServer
) -> None:
    # The model's bash call waits for the gate file, which the driver creates once it has
    # steered and followed up.
    wait = "while [ ! -f gate ]; do sleep 0.05; done; echo gate open"
    server.push(
        tool_reply([("bash", {"command": wait})]),
        text_reply("Took both steers."),
        text_reply("Did the follow-up."),
    )
    result = drive(npm_dir, tmp_path, server, "steer")

    assert result["disposition"] == "started"
    assert result["toolStart"]["toolName"] == "bash"
    assert result["toolStart"]["args"] == {"command": wait}
    assert result["busyPrompt"].startswith("Agent is already processing")
    assert (result["steered"], result["followed"], result["queuedPrompt"]) == (
        "queued",
        "queued",
        "queued",
    )
    assert result["stateWhileBusy"]["isStreaming"] is True
    assert result["stateWhileBusy"]["pendingMessageCount"] == 3

    queue_updates = [e for e in result["events"] if e["type"] == "queue_update"]
    assert {"steering": ["steer one", "steer two"], "followUp": ["follow up one"]} in [
        {"steering": q["steering"], "followUp": q["followUp"]} for q in queue_updates
    ]
    assert queue_updates[-1]["steering"] == [] and queue_updates[-1]["followUp"] == []

    # The steers reached the next model call together (mode "all"), the follow-up the
    # one after, when the model would have stopped.
    assert len(server.requests) == 3
    assert _user_texts(server.requests[1])[-2:] == ["steer one", "steer two"]
    assert _user_texts(server.requests[2])[-1] == "follow up one"

    events = result["events"]
    tool_end = next(e for e in events if e["type"] == "tool_execution_end")
    assert tool_end["isError"] is False
    assert "gate open" in tool_end["result"]["content"][0]["text"]
    assert _types(events).count("agent_settled") == 1
    assert _types(events)[-1] == "agent_settled"
    assert result["state"]["isStreaming"] is False
    roles = [m["role"] for m in result["messages"]]
    assert roles == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_abort_during_a_tool_call(npm_dir: Path, tmp_path: Path, server: ScriptedServer) -> None:
    endless = "echo $$ > pid; while [ ! -f gate ]; do sleep 0.05; done"
    server.push(tool_reply([("bash", {"command": endless})]))
    result = drive(npm_dir, tmp_path, server, "abort")

    assert result["settledEvent"]["aborted"] is True
    assert result["state"]["isStreaming"] is False
    events = result["events"]
    tool_end = next(e for e in events if e["type"] == "tool_execution_end")
    assert tool_end["isError"] is True
    agent_end = [e for e in events if e["type"] == "agent_end"]
    assert agent_end[-1]["stopReason"] == "aborted"
    # The command's shell was stopped with its process group.
    shell_pid = int((tmp_path / "ws" / "pid").read_text())
    assert _gone(shell_pid), f"the bash command (pid {shell_pid}) survived the abort"
    assert len(server.requests) == 1


def test_bash_then_new_session(npm_dir: Path, tmp_path: Path, server: ScriptedServer) -> None:
    result = drive(npm_dir, tmp_path, server, "bash")

    ran = result["ran"]
    assert ran["exitCode"] == 3
    assert ran["cancelled"] is False
    assert ran["truncated"] is False
    assert ran["output"].splitlines() == ["hello from bash", "to stderr"]
    # A shell command is no prompt: no agent_start or agent_settled for it.
    assert "agent_start" not in _types(result["events"])
    assert "agent_settled" not in _types(result["events"])
    updates = [e for e in result["events"] if e["type"] == "bash_execution_update"]
    assert [u["delta"] for u in updates] == [ran["output"]]

    assert result["fresh"]["cancelled"] is False
    assert result["after"]["sessionId"] != result["before"]["sessionId"]
    assert result["after"]["messageCount"] == 0
    assert server.requests == []
