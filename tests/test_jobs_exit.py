"""A real `ink -p` leaves nothing running, whatever its commands started and however it
ends: the run's end, SIGTERM, SIGHUP, a double Ctrl+C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.process_markers import all_forms, kill_marked, new_marker, wait_alive, wait_gone
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")

MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}
_HOME = tempfile.mkdtemp(prefix="ink-jobs-tests-")


def _default_hangup() -> None:
    # ink leaves an ignored SIGHUP alone (`nohup ink`); a suite itself run under nohup
    # would hand that on, and the SIGHUP case would test nohup, not a closed terminal.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start_ink(server: ScriptedServer, workspace: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        XDG_DATA_HOME=os.path.join(_HOME, "data"),
        XDG_CONFIG_HOME=os.path.join(_HOME, "config"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="m",
    )
    return subprocess.Popen(
        [sys.executable, "-m", "ink_tui", "-p", "go", "--approval", "auto"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_hangup,
    )


def test_print_mode_end_stops_every_escaped_process(
    server: ScriptedServer, workspace: Path
) -> None:
    prefix = new_marker()
    command, markers = all_forms(prefix)
    server.push(
        tool_reply([("bash", {"command": command + "\necho started\n"})]),
        text_reply("The server is up."),
    )
    proc = start_ink(server, workspace)
    try:
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert out == "The server is up.\n"
        # The command completed: its processes ran on until ink ended, then were stopped.
        assert "✓ bash" in err
        assert f"ink: stopped {len(markers)} background jobs left running by commands" in err
        assert wait_gone(markers, within=0) == []
    finally:
        proc.kill()
        kill_marked(prefix)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_stops_running_commands_and_jobs(
    sig: signal.Signals, server: ScriptedServer, workspace: Path
) -> None:
    prefix = new_marker()
    command, markers = all_forms(prefix)
    foreground = f"{prefix}9"
    gate = Gate()
    server.push(
        # The first call completes and leaves jobs; the second is still running.
        tool_reply(
            [
                ("bash", {"command": command + "\necho started\n"}),
                ("bash", {"command": f"setsid sleep {prefix}0 &\nsleep {foreground}\n"}),
            ]
        ),
        text_reply("never", gate=gate),
    )
    proc = start_ink(server, workspace)
    try:
        wait_alive([*markers, f"{prefix}0", foreground], within=20)
        proc.send_signal(sig)
        proc.communicate(timeout=20)
        assert proc.returncode == -sig
        assert wait_gone([*markers, f"{prefix}0", foreground], within=0) == []
    finally:
        gate.open()
        proc.kill()
        kill_marked(prefix)


def test_a_double_ctrl_c_stops_what_escaped(server: ScriptedServer, workspace: Path) -> None:
    prefix = new_marker()
    command, markers = all_forms(prefix)
    foreground = f"{prefix}9"
    server.push(tool_reply([("bash", {"command": f"{command}\nsleep {foreground}\n"})]))
    proc = start_ink(server, workspace)
    try:
        wait_alive([*markers, foreground], within=20)
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
        assert proc.returncode == 130
        assert wait_gone([*markers, foreground], within=0) == []
    finally:
        proc.kill()
        kill_marked(prefix)
