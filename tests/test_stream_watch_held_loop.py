"""The stream-idle limit measures the server only: when ink's own event loop is held up
past the end of a wait (a handler that blocks it, a starved machine), the bytes may
have waited in the socket all along, and that time is not the server's silence."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from ink_tui.core.provider_api import ProviderError, StreamTimeouts, Waiting
from ink_tui.providers.stream_watch import StreamWatch
from tests.rpc_pipes import RawInk, clean_env
from tests.scripted_server import Pause, Reply, ScriptedServer, Step, chunk, usage_chunk

LIMITS = StreamTimeouts(
    first_byte_s=120, idle_s=60, attempt_s=600, notice_after_s=3, notice_every_s=1
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_time_the_loop_was_held_past_a_wait_is_not_the_servers_silence() -> None:
    clock = Clock()
    watch = StreamWatch(LIMITS, "the server", clock)
    watch.arrived()
    assert watch.patience() == 3
    clock.now = 70  # the wait was for 3 s; ink's loop came back 67 s late
    # That wait saw nothing of the server: no silence to report, none counted.
    assert watch.quiet() == Waiting(0, 0, over=True)
    # A real silence still ends the reply at the limit.
    while True:
        clock.now += watch.patience()
        try:
            watch.quiet()
        except ProviderError as error:
            assert "stalled: the server sent nothing for 60 s" in str(error)
            break
    assert clock.now == pytest.approx(70 + 60)


def test_the_attempt_limit_still_counts_every_second() -> None:
    clock = Clock()
    watch = StreamWatch(LIMITS, "the server", clock)
    watch.arrived()
    watch.patience()
    clock.now = 650
    with pytest.raises(ProviderError, match="took longer than 600 s"):
        watch.quiet()


HOLDING_EXTENSION = """
import time


def setup(ink):
    held = []

    def hold(event):
        # A badly written handler: it blocks ink's event loop once, mid-stream.
        if not held:
            held.append(True)
            time.sleep(2.5)

    ink.on("message_update", hold)
"""


def test_a_handler_that_blocks_the_loop_mid_stream_is_not_blamed_on_the_server(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "config" / "ink" / "extensions"
    folder.mkdir(parents=True)
    (folder / "hold.py").write_text(textwrap.dedent(HOLDING_EXTENSION).lstrip())
    texts = [f"piece {n}. " for n in range(30)]
    steps: list[Step] = [chunk({"role": "assistant", "content": ""})]
    for n, text in enumerate(texts):  # never silent for long: 30 pieces over ~2 s
        # The pause after the first piece: the handler holds the loop while ink waits
        # with nothing read yet, the rest then sits in the socket meanwhile.
        steps += [chunk({"content": text}), Pause(0.5 if n == 0 else 0.05)]
    steps += [chunk({}, finish="stop"), usage_chunk(), "data: [DONE]\n\n"]
    server.push(Reply(steps))
    ink = RawInk(server, workspace, clean_env(tmp_path, INK_STREAM_IDLE_TIMEOUT_S="1"))
    try:
        started = time.monotonic()
        ink.send({"type": "prompt", "message": "go", "id": "p"})
        lines = ink.read_until(lambda line: line["type"] == "agent_settled", within=60)
        assert time.monotonic() - started >= 2.5  # the handler did hold the loop
        stalls = [line for line in lines if "stall" in str(line)]
        assert not stalls, stalls[:1]
        assert lines[-1]["stop_reason"] == "completed"
        [end] = [line for line in lines if line["type"] == "message_end"]
        assert end["message"]["text"] == "".join(texts)
        ink.close_stdin()
        assert ink.wait() == 0
    finally:
        ink.kill()
