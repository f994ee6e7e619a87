"""The full-screen `ink` process's exit status, read from the real process on a pty.

Two Ctrl+C while a run is running leave at once with status 130 (the first aborts, the
second, before the run settles, exits); the ways to leave an idle app exit 0. Leaving
at once also kills a command the bash tool is running: nothing is left behind.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.pty_terminal import PtyInk
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply

MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}
CTRL_C = b"\x03"

StartInk = Callable[[], PtyInk]


@pytest.fixture
def start_ink(server: ScriptedServer, workspace: Path, tmp_path: Path) -> Iterator[StartInk]:
    started: list[PtyInk] = []
    # Sessions, config and history go to the test's folder, never the real home.
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        # The command these tests interrupt runs without an approval question.
        INK_APPROVAL="auto",
    )

    def start() -> PtyInk:
        ink = PtyInk(["--base-url", server.base_url, "--model", "m"], cwd=workspace, env=env)
        started.append(ink)
        # The status bar is drawn: the app reads keys now.
        ink.wait_for("idle")
        return ink

    yield start
    for ink in started:
        ink.close()


def commands_running_in(folder: Path, command: list[str]) -> list[int]:
    """Pids of live (not zombie) processes running `command` with `folder` as their cwd."""
    found = []
    wanted = "\0".join(command).encode() + b"\0"
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"{entry.path}/cmdline", "rb") as file:
                if file.read() != wanted:
                    continue
            if os.readlink(f"{entry.path}/cwd") != str(folder):
                continue
            with open(f"{entry.path}/stat", "rb") as file:
                stat = file.read()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def wait_for(predicate: Callable[[], object], what: str, ink: PtyInk, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; screen:\n{ink.text()[-3000:]}")
        time.sleep(0.05)


def test_two_ctrl_c_while_the_model_streams_exit_130(
    server: ScriptedServer, start_ink: StartInk
) -> None:
    gate = Gate()
    server.push(text_reply("Thinking about it, slowly.", gate=gate))
    ink = start_ink()
    ink.send(b"hello\r")
    assert gate.reached.wait(10), "the request never reached the server"

    ink.send(CTRL_C + CTRL_C)

    assert ink.wait_exit() == 130


def test_two_ctrl_c_while_a_command_runs_exit_130_and_leave_no_process(
    server: ScriptedServer, workspace: Path, start_ink: StartInk
) -> None:
    # The command ignores SIGTERM (so does `sleep`, which inherits that): the abort's
    # polite stop waits its grace period, so the second Ctrl+C surely comes before the
    # run settles, and only the exit's own kill can stop the command.
    server.push(tool_reply([("bash", {"command": "trap '' TERM; sleep 300"})]))
    ink = start_ink()
    ink.send(b"run it\r")
    sleep = ["sleep", "300"]
    wait_for(lambda: commands_running_in(workspace, sleep), "`sleep 300` to start", ink)

    # Both presses in one write, read together: a stall of the machine between two
    # writes could outlast the grace and let the run settle before the second.
    ink.send(CTRL_C + CTRL_C)

    assert ink.wait_exit() == 130
    # Killed before ink exits; the kernel may take a moment to finish it.
    wait_for(lambda: not commands_running_in(workspace, sleep), "`sleep 300` to be gone", ink, 10)


def test_quit_and_idle_double_ctrl_c_exit_0(start_ink: StartInk) -> None:
    # Typed as soon as the first frame shows, as a user may: before the controller.
    ink = start_ink()
    ink.send(b"/quit\r")
    assert ink.wait_exit() == 0, ink.text()[-3000:]

    # A lone press arms quitting and says so; once its window has passed (the hints are
    # back) ink still runs.
    ink = start_ink()
    before = ink.mark()
    ink.send(CTRL_C)
    ink.wait_for("Press Ctrl+C again to quit", since=before)
    armed = ink.mark()
    ink.wait_for("Enter send", since=armed)
    assert ink.process.poll() is None
    # A double press, in one write: read together, so no stall of the machine can fall
    # between the two and the quit window (2 s from the first, as the app measures it).
    ink.send(CTRL_C + CTRL_C)
    assert ink.wait_exit() == 0, ink.text()[-3000:]
