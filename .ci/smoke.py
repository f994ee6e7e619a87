"""Smoke run of an installed `ink`: each way to start it answers, on the offline demo model.

Run by .ci/run in the virtualenv made by the README's plain install (the newest release
of every dependency, no test extra), so it uses the standard library only. Each check
prints one line; the first that fails prints what it saw and the script exits 1.

    python .ci/smoke.py

Nothing is configured: HOME and the XDG folders are fresh temporary ones and no API key
or model variable is passed on, so `ink` runs its built-in demo model.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import queue
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

INK = Path(sys.executable).with_name("ink")
# Text of the demo's scripted answer: its first line, and the code block near its end.
DEMO_OPENING = "offline demo model"
DEMO_LATE = "count_lines"
# Colour and cursor sequences, so the pty's output can be searched for words.
ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class Failed(Exception):
    pass


def clean_env(root: Path) -> dict[str, str]:
    """No model, key or config of the machine's: only what a fresh account has."""
    env = {
        "PATH": f"{INK.parent}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"),
    }
    for name in ("home", "config", "data", "state", "cache"):
        (root / name).mkdir()
    return env


def make_workspace(root: Path) -> Path:
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "sum.py").write_text("def add(a, b):\n    return a + b\n")
    return workspace


def check_print(env: dict[str, str], workspace: Path) -> str:
    done = subprocess.run(
        [str(INK), "-p", "what does this project do?"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0 or DEMO_OPENING not in done.stdout or DEMO_LATE not in done.stdout:
        said = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
        raise Failed(f"exit {done.returncode}\n{said}")
    return f"{len(done.stdout)} characters of answer, exit 0"


def check_rpc(env: dict[str, str], workspace: Path) -> str:
    process = subprocess.Popen(
        [str(INK), "--mode", "rpc"],
        cwd=workspace,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stdout])
    reader.daemon = True
    reader.start()
    seen: list[str] = []
    try:
        command = {"type": "prompt", "id": 1, "message": "what does sum.py do?"}
        process.stdin.write(json.dumps(command) + "\n")
        process.stdin.flush()
        deadline = time.monotonic() + 120
        settled = None
        while settled is None:
            if time.monotonic() > deadline:
                raise Failed("no agent_settled in 120 s; lines:\n" + "".join(seen[-20:]))
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                if process.poll() is not None:
                    raise Failed(
                        f"exit {process.returncode} before agent_settled; lines:\n"
                        + "".join(seen[-20:])
                    ) from None
                continue
            seen.append(line)
            event = json.loads(line)
            if event.get("type") == "agent_settled":
                settled = event
        if settled.get("stop_reason") != "completed" or settled.get("error") is not None:
            raise Failed(f"the run did not complete: {line}")
        process.stdin.close()  # the documented way to end: settle, exit 0
        code = process.wait(30)
        if code != 0:
            raise Failed(f"exit {code} after stdin closed; stderr:\n{process.stderr.read()}")
        texts = sum('"message_update"' in line for line in seen)
        return f"agent_settled completed after {len(seen)} lines ({texts} message updates)"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def check_serve(env: dict[str, str], workspace: Path) -> str:
    process = subprocess.Popen(
        [str(INK), "serve", "--host", "127.0.0.1", "--port", "0"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    # Read stderr all along: a pipe nobody reads fills and stops the server mid-write.
    said: list[str] = []
    stderr = process.stderr
    threading.Thread(target=lambda: said.extend(stderr), daemon=True).start()
    try:
        ready, _, _ = select.select([process.stdout], [], [], 60)
        first = process.stdout.readline() if ready else ""
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", first)
        if found is None:
            process.kill()
            process.wait(10)
            raise Failed(f"no URL line in 60 s: {first!r}; stderr:\n{''.join(said)}")
        base, token = found.groups()
        try:
            urllib.request.urlopen(f"{base}/api/sessions", timeout=10)
            raise Failed("a request without the token was answered")
        except urllib.error.HTTPError as exc:
            if exc.code != 401:
                raise Failed(f"without the token: {exc.code}, not 401") from None
        request = urllib.request.Request(
            f"{base}/api/sessions", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            status = response.status
            body = json.loads(response.read())
        if status != 200 or not isinstance(body.get("sessions"), list):
            raise Failed(f"GET /api/sessions: {status} {body!r}")
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(30)
        except subprocess.TimeoutExpired:
            raise Failed(f"still running 30 s after SIGINT; stderr:\n{''.join(said)}") from None
        if code not in (0, 130, -signal.SIGINT):
            raise Failed(f"exit {code} after SIGINT; stderr:\n{''.join(said)}")
        return f"GET /api/sessions answered 200 ({len(body['sessions'])} sessions), 401 untokened"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


class Pty:
    """`ink` on a pseudo-terminal of 100x30: keys in, what it draws out."""

    def __init__(self, env: dict[str, str], workspace: Path) -> None:
        env = {**env, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: size its terminal, then become ink
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
                os.chdir(workspace)
                # Asked for approval, the demo's one command would wait for a key.
                os.execve(str(INK), [str(INK), "--approval", "auto"], env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.raw = bytearray()
        self.closed = False  # ink closed its end of the pty
        self.status: int | None = None

    def text(self) -> str:
        return ESCAPES.sub("", self.raw.decode("utf-8", "replace"))

    def pump(self, seconds: float) -> None:
        """Read what ink draws for up to `seconds` (the pty must be drained all along)."""
        end = time.monotonic() + seconds
        while not self.closed and (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.2))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # EIO: ink closed its end
                    data = b""
                self.closed = not data
                self.raw += data
        if self.closed:
            time.sleep(max(0.0, min(seconds, end - time.monotonic())))

    def wait_for(self, needle: str, within: float, after: int = 0) -> int:
        deadline = time.monotonic() + within
        while (at := self.text().find(needle, after)) < 0:
            if self.status is not None or self.reap(0):
                raise Failed(f"ink exited ({self.status}) before {needle!r}:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise Failed(f"{needle!r} not drawn within {within:.0f} s:\n{self.tail()}")
            self.pump(0.2)
        return at

    def send(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def reap(self, within: float) -> bool:
        deadline = time.monotonic() + within
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() >= deadline:
                return False
            self.pump(0.1)
        return True

    def tail(self) -> str:
        return self.text()[-3000:]

    def close(self) -> None:
        if self.status is None and not self.reap(0):
            os.kill(self.pid, signal.SIGKILL)
            self.reap(5)
        os.close(self.fd)


def check_tui(env: dict[str, str], workspace: Path) -> str:
    ink = Pty(env, workspace)
    try:
        # The status bar says idle: the first frame is up and keys are read.
        ink.wait_for("idle", 60)
        ink.send(b"what does sum.py do?")
        ink.wait_for("sum.py do?", 20)
        ink.send(b"\r")
        ink.wait_for(DEMO_OPENING, 60)
        late = ink.wait_for(DEMO_LATE, 90)
        # Back to idle once the answer is complete, then leave.
        ink.wait_for("idle", 60, after=late)
        ink.send(b"/quit\r")
        if not ink.reap(30):
            raise Failed(f"ink did not exit after /quit:\n{ink.tail()}")
        if ink.status != 0:
            raise Failed(f"exit {ink.status} after /quit:\n{ink.tail()}")
        return f"streamed the demo's answer ({len(ink.raw)} bytes drawn), /quit exit 0"
    finally:
        ink.close()


def main() -> int:
    # A script started in the background by a shell without job control (`cmd &` in a
    # CI step) inherits SIGINT ignored, and so would every ink it starts: `ink serve`
    # keeps a signal it was started with ignored (as under nohup), so the Ctrl+C below
    # would never reach it. A user's Ctrl+C is what is being tried: give it back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if not INK.is_file():
        print(f"smoke: no ink command at {INK}", file=sys.stderr)
        return 1
    checks = [
        ("ink -p", check_print),
        ("ink --mode rpc", check_rpc),
        ("ink serve", check_serve),
        ("ink (TUI in a pty)", check_tui),
    ]
    for name, check in checks:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="ink-smoke-") as folder:
            root = Path(folder)
            env = clean_env(root)
            try:
                said = check(env, make_workspace(root))
            except (Failed, subprocess.TimeoutExpired, OSError, ValueError) as exc:
                print(f"smoke: FAIL {name}: {exc}", flush=True)
                return 1
        print(f"smoke: ok   {name}: {said} ({time.monotonic() - started:.1f} s)", flush=True)
    print(f"smoke: all {len(checks)} checks ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
