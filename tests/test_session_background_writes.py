"""The session file is written on the writer's own thread: never blocking the caller on
the disk, in order, complete on close, and loud when the disk fails. Real files only."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink_tui.control.bus import EventBus
from ink_tui.core.events import (
    MessageEnd,
    RunEnd,
    RunStart,
    StateChange,
    ToolEnd,
    TurnEnd,
    UserMessageEvent,
)
from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ink_tui.core.tool_api import ToolResult
from ink_tui.session import session_writer
from ink_tui.session.entries import SessionHeader, ToolResultEntry
from ink_tui.session.session_reader import load_session
from ink_tui.session.session_recorder import SessionRecorder
from ink_tui.session.session_writer import SessionWriteError, SessionWriter
from ink_tui.session.store_paths import utc_now

REPO = Path(__file__).resolve().parents[1]
REAL_FSYNC = os.fsync
# How long a test waits for something that should take milliseconds: only a bug reaches it.
PATIENCE_S = 10.0


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


class GatedFsync:
    """An fsync that holds the writer's thread until the test opens the gate."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()

    def __call__(self, fd: int) -> None:
        self.entered.set()
        self.gate.wait(PATIENCE_S)
        REAL_FSYNC(fd)


@pytest.fixture
def gated_fsync(monkeypatch: pytest.MonkeyPatch) -> Iterator[GatedFsync]:
    fsync = GatedFsync()
    monkeypatch.setattr(session_writer.os, "fsync", fsync)
    try:
        yield fsync
    finally:
        fsync.gate.set()  # never leave a writer's thread stuck behind a failed test


def slow_fsync(monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[int]:
    """Make every fsync take `seconds`; returns the file sizes each one saw."""
    sizes: list[int] = []

    def fsync(fd: int) -> None:
        time.sleep(seconds)
        sizes.append(os.fstat(fd).st_size)
        REAL_FSYNC(fd)

    monkeypatch.setattr(session_writer.os, "fsync", fsync)
    return sizes


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def publish_a_turn(bus: EventBus, run_id: str, n: int) -> list[Message]:
    """One agent run with a prompt, a tool call and its result; returns its history."""
    call = ToolCall(id=f"c{n}", name="read", arguments={"path": "README.md"})
    reply = AssistantMessage(text=f"reply {n}", tool_calls=[call], finish_reason="tool_calls")
    tool_message = ToolResultMessage(call.id, call.name, f"result {n}")
    events = [
        RunStart(kind="agent", prompt=f"prompt {n}"),
        UserMessageEvent(text=f"prompt {n}", kind="prompt"),
        MessageEnd(message=reply),
        ToolEnd(call=call, result=ToolResult(f"result {n}"), duration_s=0.1, message=tool_message),
        TurnEnd(turn=1),
        RunEnd(stop_reason="completed", turns=1),
    ]
    for event in events:
        event.run_id = run_id
        bus.publish(event)
    return [UserMessage(f"prompt {n}"), reply, tool_message]


# -- the caller never waits for the disk ------------------------------------------------


def test_recording_and_sync_return_while_an_fsync_is_still_running(
    workspace: Path, gated_fsync: GatedFsync
) -> None:
    writer = SessionWriter.create(workspace, "m")
    bus = EventBus()
    bus.subscribe(SessionRecorder(writer))
    # The header's fsync now holds the writer's thread until the gate opens.
    assert gated_fsync.entered.wait(PATIENCE_S)

    started = time.monotonic()
    history = publish_a_turn(bus, "run-1", 1)
    writer.record_model_change("m2")
    writer.sync()
    elapsed = time.monotonic() - started

    # Had any call waited for that fsync it would have taken PATIENCE_S.
    assert elapsed < 1.0
    assert not gated_fsync.gate.is_set()
    assert [line["type"] for line in lines(writer.path)] == ["header"]  # all still queued

    gated_fsync.gate.set()
    writer.close()
    loaded = load_session(writer.path)
    assert loaded.history == history
    assert loaded.model == "m2"


async def test_the_event_loop_keeps_running_while_each_fsync_takes_a_second(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = SessionWriter.create(workspace, "m")
    writer.drain(sync=True)  # the header's fsyncs at full speed, before the slow disk
    slow_fsync(monkeypatch, 1.0)
    bus = EventBus()
    bus.subscribe(SessionRecorder(writer))
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticks = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    publish_a_turn(bus, "run-1", 1)  # its TurnEnd asks for a one-second fsync
    await asyncio.sleep(0.3)
    ticks.cancel()
    # An fsync on the loop would have stopped the ticker for a whole second.
    assert gaps and max(gaps) < 0.5
    writer.close()
    assert len(load_session(writer.path).history) == 3


# -- order and content ------------------------------------------------------------------


def test_many_entries_keep_their_order_big_and_small(workspace: Path) -> None:
    bus = EventBus()
    writer = SessionWriter.create(workspace, "m")
    bus.subscribe(SessionRecorder(writer))
    expected: list[Message] = []
    for n in range(300):
        expected += publish_a_turn(bus, f"run-{n}", n)
        # Lines larger than the file buffer go through another path in `io`.
        big = f"{n}:" + "x" * (20_000 if n % 7 == 0 else n)
        writer.record_user(UserMessage(big, kind="steer"))
        expected.append(UserMessage(big, kind="steer"))
        if n % 5 == 0:
            writer.sync()
    writer.drain()
    # Readable in full before close: what `drain` promises readers.
    assert load_session(writer.path).history == expected
    writer.close()
    loaded = load_session(writer.path)
    assert loaded.history == expected
    assert loaded.warnings == []


def test_an_entry_is_saved_as_it_was_when_recorded(
    workspace: Path, gated_fsync: GatedFsync
) -> None:
    writer = SessionWriter.create(workspace, "m")
    assert gated_fsync.entered.wait(PATIENCE_S)  # nothing below is written yet
    call = ToolCall(id="c1", name="read", arguments={"path": "a.txt"})
    reply = AssistantMessage(text="original", tool_calls=[call])
    details: dict[str, object] = {"lines": [1, 2]}
    result = ToolResultMessage("c1", "read", "original result")
    writer.record_assistant(reply)
    writer.record_tool_result(result, details, 0.5)
    # The loop goes on using these objects while the thread is behind.
    reply.text = "changed"
    reply.tool_calls.append(ToolCall(id="c2", name="ls", arguments={}))
    call.arguments["path"] = "changed.txt"
    details["lines"] = "changed"
    result.content = "changed"

    gated_fsync.gate.set()
    writer.close()
    loaded = load_session(writer.path)
    saved_reply, saved_result = loaded.history
    assert isinstance(saved_reply, AssistantMessage)
    assert saved_reply.text == "original"
    assert [(c.id, c.arguments) for c in saved_reply.tool_calls] == [("c1", {"path": "a.txt"})]
    assert isinstance(saved_result, ToolResultMessage)
    assert saved_result.content == "original result"
    entry = loaded.entries[1]
    assert isinstance(entry, ToolResultEntry) and entry.details == {"lines": [1, 2]}


# -- nothing recorded is lost -----------------------------------------------------------


def test_close_writes_and_fsyncs_everything_queued_before_returning(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = slow_fsync(monkeypatch, 0.2)
    writer = SessionWriter.create(workspace, "m")
    for n in range(50):
        writer.record_user(UserMessage(f"entry {n}"))
    writer.sync()
    writer.record_user(UserMessage("after the last sync"))
    writer.close()
    # Right after close, with no waiting: every line is there...
    assert [line.get("content") for line in lines(writer.path)[1:]] == [
        *(f"entry {n}" for n in range(50)),
        "after the last sync",
    ]
    # ...and the last fsync came after the last write.
    assert sizes[-1] == writer.path.stat().st_size


def test_close_waits_for_a_stuck_disk(workspace: Path, gated_fsync: GatedFsync) -> None:
    writer = SessionWriter.create(workspace, "m")
    writer.record_user(UserMessage("queued behind the fsync"))
    closing = threading.Thread(target=writer.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # still waiting: it must not drop the queue
    gated_fsync.gate.set()
    closing.join(PATIENCE_S)
    assert not closing.is_alive()
    assert load_session(writer.path).history == [UserMessage("queued behind the fsync")]


def test_exiting_waits_for_the_queue_before_an_immediate_exit(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Print mode's second Ctrl+C calls os._exit right after the "exited" event; the
    # recorder, subscribed before it, must have the file complete by then.
    slow_fsync(monkeypatch, 0.3)
    bus = EventBus()
    writer = SessionWriter.create(workspace, "m")
    bus.subscribe(SessionRecorder(writer))
    seen_at_exit: list[list[dict[str, object]]] = []

    def exit_now(event: object) -> None:
        if isinstance(event, StateChange) and event.state == "exited":
            seen_at_exit.append(lines(writer.path))

    bus.subscribe(exit_now)
    writer.record_user(UserMessage("before a slow fsync"))
    writer.sync()
    writer.record_assistant(AssistantMessage(text="after it"))
    bus.publish(StateChange(state="exited", exit_code=130))
    [at_exit] = seen_at_exit
    assert [line["type"] for line in at_exit] == ["header", "user", "assistant"]
    writer.close()


def run_writer_script(workspace: Path, root: Path, then: str) -> tuple[int, Path]:
    """Run `then` in a fresh Python with `writer` open on a new session; its exit code
    and the session's path."""
    code = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from ink_tui.core.messages import UserMessage
        from ink_tui.session.session_writer import SessionWriter

        writer = SessionWriter.create(Path({str(workspace)!r}), "m", Path({str(root)!r}))
        print(writer.path, flush=True)
        """
    ) + textwrap.dedent(then)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip(), done.stderr
    return done.returncode, Path(done.stdout.strip())


def test_kill_9_with_entries_in_flight_leaves_a_clean_prefix(
    workspace: Path, tmp_path: Path
) -> None:
    code, path = run_writer_script(
        workspace,
        tmp_path,
        """
        writer.drain()
        for n in range(3000):
            writer.record_user(UserMessage(f"entry {n} " + "x" * (n % 500)))
        os.kill(os.getpid(), signal.SIGKILL)
        """,
    )
    assert code == -signal.SIGKILL
    loaded = load_session(path)  # no damaged line mid-file
    saved = [m.content for m in loaded.history if isinstance(m, UserMessage)]
    assert saved == [f"entry {n} " + "x" * (n % 500) for n in range(len(saved))]
    assert len(loaded.warnings) <= 1  # at worst a cut-off last line


def test_a_writer_never_closed_is_still_written_out_at_a_normal_exit(
    workspace: Path, tmp_path: Path
) -> None:
    code, path = run_writer_script(
        workspace,
        tmp_path,
        """
        for n in range(500):
            writer.record_user(UserMessage(f"entry {n}"))
        raise SystemExit(3)  # an exit path that forgot close()
        """,
    )
    assert code == 3
    loaded = load_session(path)
    assert loaded.history == [UserMessage(f"entry {n}") for n in range(500)]


# -- errors on the thread ---------------------------------------------------------------


def full_disk_writer(tmp_path: Path) -> SessionWriter:
    """A writer whose file is /dev/full: every flush fails with ENOSPC, like a full disk."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    header = SessionHeader(id="0123456789ab", started=utc_now(), workspace="/ws", model="m")
    return SessionWriter(tmp_path / "full.jsonl", header, open("/dev/full", "ab"))


def test_a_full_disk_is_logged_at_once_and_raised_once_by_the_next_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    writer = full_disk_writer(tmp_path)
    writer.record_user(UserMessage("lost to the full disk"))  # queued: returns fine
    with pytest.raises(SessionWriteError) as raised:
        writer.drain()
    assert isinstance(raised.value, OSError)
    assert isinstance(raised.value.__cause__, OSError)
    assert raised.value.__cause__.errno == errno.ENOSPC
    assert str(tmp_path / "full.jsonl") in str(raised.value)
    assert writer.failure is raised.value.__cause__
    # Logged from the thread when it happened, before anyone asked.
    assert any(
        r.name == "ink_tui.session.background_writer" and "failed" in r.getMessage()
        for r in caplog.records
    )
    # Reported once: later calls, close included, drop their entries without a cascade.
    writer.record_user(UserMessage("dropped"))
    writer.sync()
    writer.drain()
    writer.close()
    assert writer.closed


def test_close_raises_a_failure_nobody_was_told_about(tmp_path: Path) -> None:
    writer = full_disk_writer(tmp_path)
    writer.record_user(UserMessage("lost to the full disk"))
    with pytest.raises(SessionWriteError, match="No space left"):
        writer.close()
    assert writer.closed


def test_a_failed_fsync_reaches_the_bus_log_on_the_next_event_and_stops_the_writer(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    writer = SessionWriter.create(workspace, "m")
    writer.drain(sync=True)
    bus = EventBus()
    bus.subscribe(SessionRecorder(writer))

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(session_writer.os, "fsync", failing_fsync)
    run = "run-1"
    for event in (RunStart(kind="agent"), UserMessageEvent(text="kept", kind="prompt")):
        event.run_id = run
        bus.publish(event)
    end = TurnEnd(turn=1)
    end.run_id = run
    bus.publish(end)  # the fsync fails on the thread
    deadline = time.monotonic() + PATIENCE_S
    while writer.failure is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert isinstance(writer.failure, OSError)

    caplog.clear()
    reply = MessageEnd(message=AssistantMessage(text="not written"))
    reply.run_id = run
    bus.publish(reply)
    # The recorder raised, and the bus logged it, as with a failed write in the callback.
    [record] = [r for r in caplog.records if r.name == "ink_tui.control.bus"]
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], SessionWriteError)
    assert "Input/output error" in str(record.exc_info[1])
    writer.close()  # already reported: no second error on the way out
    assert [line.get("content") for line in lines(writer.path)[1:]] == ["kept"]
