"""An app under a pseudo-terminal, as figures 1, 8 and 9 run it, that a figure can type into.

`PtyApp` spawns a command on a fresh pty of `ROWS` x `COLUMNS`, keeps
everything the app writes, and answers two questions from what reached the terminal:
when a word first showed (`wait_for`, escape sequences taken out) and how long a key
typed into the terminal took to be drawn back (`type_key`). Times are `time.monotonic()`
in the parent, from just before the spawn.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

ROWS, COLUMNS = 32, 100
_ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)")

# How much of the end of the output a marker is looked for in (a frame is a few KB).
_TAIL = 1 << 16


class PtyApp:
    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.output = bytearray()
        self.closed = False

    def _read(self, until: float) -> bool:
        """Read what the app wrote until `until`; False once the terminal is closed."""
        timeout = max(0.0, until - time.monotonic())
        readable, _, _ = select.select([self._master], [], [], timeout)
        if not readable:
            return self.proc.poll() is None
        return self._drain()

    def _drain(self) -> bool:
        try:
            data = os.read(self._master, 1 << 16)
        except OSError:  # EIO: the app closed the terminal
            self.closed = True
            return False
        if not data:
            self.closed = True
            return False
        self.output += data
        return True

    def wait_for(self, word: str, timeout: float, since: int = 0) -> float:
        """When `word` first showed in the output from byte `since` on (plain text)."""
        needle = word.encode()
        deadline = time.monotonic() + timeout
        while True:
            start = max(since, len(self.output) - _TAIL)
            if needle in _ANSI.sub(b"", bytes(self.output[start:])):
                return time.monotonic()
            if time.monotonic() > deadline or not self._read(min(deadline, time.monotonic() + 0.1)):
                raise TimeoutError(f"{word!r} did not show within {timeout} s:\n{self.text()}")

    def type_key(self, char: str, timeout: float) -> float:
        """Type `char` into the terminal; seconds until the app drew it.

        `char` must appear nowhere in what the app shows: its bytes, anywhere in the
        output after the key was sent, are the app drawing it back.
        """
        since = len(self.output)
        sent = time.monotonic()
        os.write(self._master, char.encode())
        needle = char.encode()
        deadline = sent + timeout
        while needle not in self.output[since:]:
            if time.monotonic() > deadline or not self._read(min(deadline, time.monotonic() + 0.1)):
                raise TimeoutError(f"the key {char!r} was not drawn within {timeout} s")
        return time.monotonic() - sent

    def read_to_end(self, deadline: float) -> None:
        """Keep what the app writes until it closes the terminal or `deadline`."""
        while time.monotonic() < deadline and self._read(min(deadline, time.monotonic() + 0.1)):
            pass

    def text(self) -> str:
        return _ANSI.sub(b"", bytes(self.output[-3000:])).decode("utf-8", "replace")

    def stop(self) -> None:
        """End the app and its process group; close the terminal."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        os.close(self._master)
