"""ink against a real model server: llama.cpp's own `llama-server` with SmolLM2-135M.

Each wire format ink speaks, against a server ink's authors did not write: the
OpenAI-compatible `/v1/chat/completions` and the Anthropic `/v1/messages` endpoint (the
`anthropic` kind), through ink's providers and through a real `ink -p`. What is checked
is what does not depend on what the model says: a streamed, non-empty answer; the token
counts the server reports, read back; an abort that closes the request, seen from both
sides (the server's log says it dropped the task). No tool calls: a 135M model calls
them poorly. See tests/llama_server.py for the server and the model.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink_tui.core.abort import AbortController, AbortError
from ink_tui.core.messages import AssistantMessage, UserMessage
from ink_tui.core.provider_api import ModelRequest, ReplyDone, TextChunk
from ink_tui.providers.anthropic import AnthropicProvider
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.llama_server import (
    MAX_TOKENS,
    MODEL_ALIAS,
    LlamaServer,
    fetch_model,
    model_cache,
    start_server,
)

# Loading the model and a first reply on a busy 2-core machine; the tests take seconds.
pytestmark = pytest.mark.timeout(300)

KINDS = ["openai", "anthropic"]
MODEL_VARIABLES = {
    "INK_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "INK_BASE_URL",
    "OPENAI_BASE_URL",
    "INK_MODEL",
}
SHORT_REPLY = 24


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    gguf = fetch_model(model_cache())
    server = start_server(gguf, tmp_path_factory.mktemp("llama") / "server.log")
    port = int(server.base_url.rsplit(":", 1)[1])
    try:
        yield server
    finally:
        server.stop()
    # Nothing left behind: the process is gone (reaped, exit 0) and its port is closed.
    assert server.process.returncode == 0, server.log_text()[-2000:]
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass


def provider(kind: str, server: LlamaServer) -> OpenAICompatProvider:
    if kind == "anthropic":
        return AnthropicProvider(server.base_url, MODEL_ALIAS, None)
    return OpenAICompatProvider(f"{server.base_url}/v1", MODEL_ALIAS, None)


def request(prompt: str, max_tokens: int | None = SHORT_REPLY) -> ModelRequest:
    return ModelRequest(
        system_prompt="You are a helpful assistant. Answer briefly.",
        messages=[UserMessage(prompt)],
        max_output_tokens=max_tokens,
    )


@pytest.mark.parametrize("kind", KINDS)
async def test_a_streamed_answer_with_the_servers_token_counts(
    llama: LlamaServer, kind: str
) -> None:
    model = provider(kind, llama)
    chunks: list[str] = []
    done: list[AssistantMessage] = []
    before = llama.metrics()
    try:
        async for event in model.stream(request("Say hello."), AbortController().signal):
            if isinstance(event, TextChunk):
                chunks.append(event.text)
            elif isinstance(event, ReplyDone):
                done.append(event.message)
    finally:
        await model.aclose()
    [message] = done
    # Streamed: the text came in pieces, and the reply is what the pieces add up to.
    assert len(chunks) > 1 and message.text == "".join(chunks) and message.text.strip()
    assert message.finish_reason in ("stop", "length")
    # The counts are the server's own: what its counters grew by for this request (the
    # prompt it read plus what it reused from its cache; the tokens it wrote).
    after = llama.metrics()
    grew = {name: after[name] - before[name] for name in after}
    read, reused = grew["llamacpp:prompt_tokens_total"], grew["llamacpp:prompt_tokens_cached_total"]
    usage = message.usage
    assert usage.input_tokens == read + reused > 0 and usage.cached_tokens == reused
    assert usage.output_tokens == grew["llamacpp:tokens_predicted_total"]
    assert 0 < usage.output_tokens <= SHORT_REPLY


@pytest.mark.parametrize("kind", KINDS)
async def test_an_abort_closes_the_request_and_the_server_drops_the_task(
    llama: LlamaServer, kind: str
) -> None:
    model = provider(kind, llama)
    controller = AbortController()
    # Long enough that it is still being written when the first words arrive.
    ask = request("Count from 1 to 1000, one number per line.", max_tokens=MAX_TOKENS)
    events = aiter(model.stream(ask, controller.signal))
    try:
        while not isinstance(await anext(events), TextChunk):
            pass
        slot = llama.slot()
        assert slot["is_processing"], "the reply ended before the abort"
        aborted_at = time.monotonic()
        controller.abort("test abort")
        with pytest.raises(AbortError):
            while True:
                await anext(events)
        ended_in = time.monotonic() - aborted_at
        # The server's side: it saw the connection close and dropped that task. Asked
        # while ink's client is still open (closing it would close the connection too)
        # and from a thread, so ink's event loop goes on.
        dropped = await asyncio.to_thread(llama.dropped, slot["id_task"])
    finally:
        await model.aclose()
    # ink's side: the stream ended at once, not when the reply would have.
    assert ended_in < 5, f"the aborted stream took {ended_in:.1f} s to end"
    assert dropped, llama.log_text()[-2000:]


def test_ink_p_answers_through_the_openai_compatible_endpoint(
    llama: LlamaServer, workspace: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    command = [sys.executable, "-m", "ink_tui", "-p", "Say hello in one short sentence."]
    started = time.monotonic()
    done = subprocess.run(
        [*command, "--base-url", f"{llama.base_url}/v1", "--model", MODEL_ALIAS],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), f"no answer in {took:.1f} s; stderr: {done.stderr}"
    assert "demo" not in done.stderr.lower()
