"""The real `ink` command on a pseudo-terminal: keys in, screen bytes out, exit status.

Unlike tmux, this holds the process itself, so a test reads the exit status the way a
shell does (`waitpid`), not through a wrapper. The child leads a session of its own with
the pty as its controlling terminal, as in a terminal emulator.
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pyte

INK = Path(sys.executable).with_name("ink")

# Runs in the child: take the pty as the controlling terminal, then become `ink`.
_ADOPT_TTY = (
    "import fcntl, os, sys, termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)

# Colour and cursor sequences, so tests can look for words in what was drawn.
_ESCAPES = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class PtyInk:
    def __init__(
        self,
        args: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        size: tuple[int, int] = (100, 32),
    ) -> None:
        self._master, slave = os.openpty()
        width, height = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
        self._output = bytearray()
        self._lock = threading.Lock()
        # ink redraws only the cells that changed, so a word may reach the terminal in
        # pieces: a real emulator's screen shows it whole. Fed lazily, when a test looks.
        self._screen = pyte.Screen(width, height)
        self._emulator = pyte.ByteStream(self._screen)
        self._emulated = 0
        self._screens_at_mark: dict[int, str] = {}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _ADOPT_TTY, str(INK), *args],
                cwd=cwd,
                env={**env, "TERM": "xterm-256color"},
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
            )
        finally:
            os.close(slave)
        # Drain the screen all the time: a full pty buffer would block the app's writes.
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 65536)
            except OSError:  # EIO: the child closed its end
                return
            if not data:
                return
            with self._lock:
                self._output += data

    def mark(self) -> int:
        """Where the output is now: `text(since=...)` is what is drawn after it."""
        with self._lock:
            here = len(self._output)
        self._screens_at_mark[here] = self.screen_text(upto=here)
        return here

    def screen_text(self, upto: int | None = None) -> str:
        """The emulated screen's rows, as the user sees them now (or at `upto`)."""
        with self._lock:
            fresh = bytes(self._output[self._emulated : upto])
        self._emulated += len(fresh)
        self._emulator.feed(fresh)
        return "\n".join(self._screen.display)

    def _drawn(self, needle: str, since: int) -> bool:
        """In the bytes written after `since`, or newly on the screen since then."""
        if needle in self.text(since):
            return True
        before = self._screens_at_mark.get(since, "") if since else ""
        return self.screen_text().count(needle) > before.count(needle)

    def text(self, since: int = 0) -> str:
        """Everything drawn so far (after `since`), without escape sequences."""
        with self._lock:
            raw = bytes(self._output[since:])
        return _ESCAPES.sub(b"", raw).decode("utf-8", "replace")

    def wait_for(self, needle: str, within: float = 20.0, since: int = 0) -> None:
        """Until `needle` is drawn (after `since`); fails if ink exits first."""
        deadline = time.monotonic() + within
        while not self._drawn(needle, since):
            if self.process.poll() is not None:
                raise AssertionError(
                    f"ink exited ({self.process.returncode}) before {needle!r}; "
                    f"screen:\n{self.text()[-3000:]}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never drawn; got:\n{self.text()[-2000:]}")
            time.sleep(0.05)

    def send(self, data: bytes) -> None:
        os.write(self._master, data)

    def wait_exit(self, within: float = 15.0) -> int:
        """The exit status as a shell sees it (128+N for death by signal N)."""
        try:
            code = self.process.wait(within)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"ink did not exit; screen:\n{self.text()[-2000:]}") from None
        return 128 - code if code < 0 else code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        self._reader.join(2)
        os.close(self._master)
