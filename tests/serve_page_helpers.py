"""What the browser page's tests share: the real `ink serve` in a subprocess (its data
folders in a tmp dir, its model the loopback scripted server), a TCP relay that can cut
every connection (a dropped network, as the page sees it), and Debian's chromium.
"""

from __future__ import annotations

import os
import re
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
URL_LINE = re.compile(r"ink serve: (http://\S+/\?token=(\S+))")
# The command under test; the whole point is that it is the real one.
SERVE_COMMAND = [sys.executable, "-m", "ink_tui", "serve"]
MODEL_VARIABLES = {"INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "OPENAI_BASE_URL", "INK_MODEL"}


def skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (apt-get install -y chromium; .ci/run does it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    try:
        import ink_tui.serve.app  # noqa: F401
    except ImportError:
        return "ink_tui.serve is not there yet: `ink serve` cannot start"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """A running `ink serve`: its address (with the token) and its process."""

    url: str
    token: str
    port: int
    process: subprocess.Popen[str]
    workspace: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def ink_serve(model_url: str | None, root: Path, *extra: str) -> Iterator[Served]:
    """`ink serve` on a free loopback port, for a workspace under `root`; its model the
    one at `model_url`, or with None the built-in demo model (no model configured)."""
    workspace = root / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "README.md").write_text("# acme-shop\n\nA small order service.\n")
    (workspace / "cart.py").write_text("def total(items):\n    return sum(items)\n")
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
    )
    port = free_port()
    command = [
        *SERVE_COMMAND,
        *["--port", str(port), "--workspace", str(workspace)],
        *(["--base-url", model_url, "--model", "scripted-model"] if model_url else []),
        *extra,
    ]
    process = subprocess.Popen(
        command,
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url, token = _read_url(process, 20.0)
        yield Served(url=url, token=token, port=port, process=process, workspace=workspace)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _read_url(process: subprocess.Popen[str], within: float) -> tuple[str, str]:
    assert process.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + within
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=0.1):
                if process.poll() is not None:
                    break
                continue
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            match = URL_LINE.search(line)
            if match:
                return match.group(1), match.group(2)
    process.kill()
    _, err = process.communicate(timeout=5)
    raise RuntimeError(f"ink serve printed no URL; stdout={''.join(seen)!r} stderr={err!r}")


class Relay:
    """A TCP relay in front of the server; `cut()` drops every connection at once, the
    way a network drop or a restarted proxy does. New connections are accepted again.
    Its port is known before the server's (`target` may be set later): the server is
    told its address with `--public-origin`, as a proxy's. While `holding`, it takes new
    connections and closes them at once (a proxy whose upstream is down)."""

    def __init__(self, target_port: int = 0) -> None:
        self.target = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.holding = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.holding:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def cut(self) -> int:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        return len(sockets) // 2

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium (Debian's: Playwright's own download is not reachable here)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()
