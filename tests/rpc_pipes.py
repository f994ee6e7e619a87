"""A real `ink --mode rpc` on plain pipes, for tests that read its stdout byte for byte
(or stop reading it): every line parsed strictly, as a strict JSON reader would."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.scripted_server import ScriptedServer


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INK_", "OPENAI_", "XDG_", "ANTHROPIC_")) and k != "HOME"
    }
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        **extra,
    )
    return env


def strict(line: bytes | str) -> dict[str, Any]:
    """One protocol line as a strict parser reads it (no NaN, no Infinity)."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    value = json.loads(line, parse_constant=refuse)
    assert isinstance(value, dict), line
    return value


def covered(lines: list[dict[str, Any]]) -> list[int]:
    """Every event seq the lines stand for: a merged delta `seq_first..seq`, an
    `output_dropped` line `seq_first..seq_last`."""
    seqs: list[int] = []
    for line in lines:
        if line["type"] == "output_dropped":
            seqs.extend(range(line["seq_first"], line["seq_last"] + 1))
        elif line["type"] != "response":
            seqs.extend(range(line.get("seq_first", line["seq"]), line["seq"] + 1))
    return seqs


class RawInk:
    """`ink --mode rpc` whose stdout the test reads when it chooses to."""

    def __init__(
        self, server: ScriptedServer, workspace: Path, env: dict[str, str], *args: str
    ) -> None:
        argv = [sys.executable, "-m", "ink_tui", "--mode", "rpc"]
        argv += ["--base-url", server.base_url, "--model", "m", "--api-key", "k", *args]
        self.stderr_path = workspace.parent / f"ink-stderr-{time.monotonic_ns()}.txt"
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            argv,
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        assert self.process.stdout is not None
        self._out = self.process.stdout.fileno()
        self._buffer = bytearray()
        self.raw_lines: list[bytes] = []

    def send(self, line: str | dict[str, Any]) -> None:
        text = line if isinstance(line, str) else json.dumps(line)
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode() + (b"" if text.endswith("\n") else b"\n"))
        self.process.stdin.flush()

    def waiting_bytes(self) -> int:
        """Bytes ink wrote that nobody has read yet (in the pipe)."""
        count = bytearray(4)
        fcntl.ioctl(self._out, termios.FIONREAD, count)
        return int.from_bytes(count, sys.byteorder)

    def pipe_size(self) -> int:
        return fcntl.fcntl(self._out, fcntl.F_GETPIPE_SZ)

    def read_until(
        self, done: Callable[[dict[str, Any]], bool], within: float = 30.0
    ) -> list[dict[str, Any]]:
        """Lines (strictly parsed) until one for which `done` holds, or EOF."""
        deadline = time.monotonic() + within
        lines: list[dict[str, Any]] = []
        while True:
            while b"\n" in self._buffer:
                raw, _, rest = bytes(self._buffer).partition(b"\n")
                self._buffer = bytearray(rest)
                self.raw_lines.append(raw)
                lines.append(strict(raw))
                if done(lines[-1]):
                    return lines
            left = deadline - time.monotonic()
            assert left > 0, f"no such line within {within} s; last: {lines[-3:]}"
            chunk = _read_within(self._out, left)
            if not chunk:
                assert not self._buffer, f"a cut line at the end: {bytes(self._buffer)[:200]!r}"
                return lines
            self._buffer += chunk

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def wait(self, within: float = 30.0) -> int:
        try:
            return self.process.wait(within)
        finally:
            self._stderr.close()

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        self._stderr.close()


def _read_within(fd: int, seconds: float) -> bytes:
    readable, _, _ = select.select([fd], [], [], seconds)
    assert readable, f"ink wrote nothing for {seconds:.0f} s"
    return os.read(fd, 1 << 20)


def signals_caught(pid: int) -> set[int]:
    """The signals `pid` has a handler for (Linux's /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            mask = int(line.split()[1], 16)
            return {n for n in range(1, 65) if mask >> (n - 1) & 1}
    return set()
