"""`ink -p`: the real command in a subprocess, against the demo and the loopback server."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ink_tui.tools.process_group import group_alive
from tests.scripted_server import Gate, ScriptedServer, error_reply, text_reply, tool_reply

MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}

# Sessions and config of these runs go to a folder of their own, never the real home.
_HOME = tempfile.mkdtemp(prefix="ink-print-tests-")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env["XDG_DATA_HOME"] = os.path.join(_HOME, "data")
    env["XDG_CONFIG_HOME"] = os.path.join(_HOME, "config")
    env.update(extra)
    return env


def ink(*args: str, cwd: Path, env: dict[str, str], stdin: str | None = None):
    return subprocess.run(
        [sys.executable, "-m", "ink_tui", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_hello_with_no_model_configured_uses_the_offline_demo(workspace: Path) -> None:
    done = ink("-p", "hello", cwd=workspace, env=clean_env())
    assert done.returncode == 0, done.stderr
    assert "demo model" in done.stdout
    assert "offline demo model" in done.stderr


def test_answer_streams_to_stdout_and_tool_summaries_to_stderr(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("read", {"path": "README.md"}), ("ls", {})], text="Let me look."),
        text_reply("It is a tiny project."),
    )
    env = clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m", INK_API_KEY="sk-secret")
    done = ink("-p", "what is this?", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Let me look.\n\nIt is a tiny project.\n"
    lines = done.stderr.splitlines()
    assert lines[0].startswith("✓ read README.md: 3 lines")
    assert lines[1].startswith("✓ ls .")
    assert server.requests[0]["messages"][1] == {"role": "user", "content": "what is this?"}
    assert server.request_headers[0]["Authorization"] == "Bearer sk-secret"
    assert "sk-secret" not in done.stdout + done.stderr


def test_prompt_from_stdin_is_joined_to_the_flag_prompt(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(text_reply("Looks fine."))
    env = clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m")
    done = ink("-p", "review this", cwd=workspace, env=env, stdin="diff --git a b\n")
    assert done.returncode == 0, done.stderr
    assert server.requests[0]["messages"][1]["content"] == "review this\n\ndiff --git a b"
    assert "Authorization" not in server.request_headers[0]


def test_failure_exits_1_with_the_servers_message(server: ScriptedServer, workspace: Path) -> None:
    server.push(error_reply(401, "Incorrect API key provided"))
    env = clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m", INK_API_KEY="bad")
    done = ink("-p", "hi", cwd=workspace, env=env)
    assert done.returncode == 1
    assert "Incorrect API key provided" in done.stderr
    assert "401" in done.stderr


def test_no_prompt_is_a_usage_error(workspace: Path) -> None:
    done = ink("-p", cwd=workspace, env=clean_env(), stdin="")
    assert done.returncode == 2
    assert "no prompt" in done.stderr


def read_until(proc: subprocess.Popen[str], needle: str, within: float = 20.0) -> str:
    """What `proc` printed until `needle` (read from the pipe itself, past the buffer)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + within
    while needle.encode() not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"{needle!r} never printed; got {data!r}")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise AssertionError(f"ink exited before printing {needle!r}; got {data!r}")
        data += chunk
    return data.decode()


def _start(server: ScriptedServer, workspace: Path) -> subprocess.Popen[str]:
    # The commands these tests interrupt must run: print mode refuses what would ask.
    env = clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m", INK_APPROVAL="auto")
    return subprocess.Popen(
        [sys.executable, "-m", "ink_tui", "-p", "go"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_first_ctrl_c_aborts_and_exits_130_with_the_partial_answer(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Partial answer, then a long wait", pieces=2, gate=gate))
    proc = _start(server, workspace)
    assert gate.reached.wait(20)
    # The first piece is printed (not only sent): the abort comes after it.
    printed = read_until(proc, "Partial answer")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert (printed + out).startswith("Partial answer")
    assert server.disconnected.wait(2)


def test_second_ctrl_c_exits_at_once_even_while_a_tool_ignores_the_abort(
    server: ScriptedServer, workspace: Path
) -> None:
    # A command that ignores SIGTERM keeps the run from settling for about 2 s.
    marker = workspace / "started"
    command = f"trap '' TERM; echo $$ > {marker}; sleep 20"
    server.push(tool_reply([("bash", {"command": command})]))
    proc = _start(server, workspace)
    for _ in range(400):
        if marker.exists() and marker.read_text().strip():
            break
        time.sleep(0.05)
    assert marker.exists(), proc.stderr.read() if proc.poll() is not None else "not started"
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert time.monotonic() - started < 1.5
    # Exiting at once does not leave the command running.
    pgid = int(marker.read_text())
    deadline = time.monotonic() + 2
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not group_alive(pgid)
