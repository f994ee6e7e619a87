"""Writing sessions: a real SessionRecorder on a real EventBus, read back with the reader."""

from __future__ import annotations

import json
import math
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from ink_tui.control.bus import EventBus
from ink_tui.core.events import (
    Event,
    MessageEnd,
    Notice,
    QueueEntryView,
    QueueUpdate,
    RunEnd,
    RunStart,
    TextDelta,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)
from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserKind,
    UserMessage,
)
from ink_tui.core.tool_api import ToolResult
from ink_tui.session import session_writer
from ink_tui.session.entries import (
    AssistantEntry,
    ErrorEntry,
    InterruptEntry,
    ModelChangeEntry,
    ToolResultEntry,
    UserEntry,
)
from ink_tui.session.session_reader import load_session
from ink_tui.session.session_recorder import SessionRecorder
from ink_tui.session.session_writer import SessionWriter
from ink_tui.session.store_paths import workspace_dir


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep every test away from the real home: platformdirs reads XDG_DATA_HOME."""
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


class Scenario:
    """Publishes the events a run would, and keeps the history the loop would have."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.history: list[Message] = []
        self.run_id: str | None = None

    def emit(self, event: Event) -> None:
        event.run_id = self.run_id
        self.bus.publish(event)

    def start(self, run_id: str, kind: str = "agent", prompt: str = "") -> None:
        self.run_id = run_id
        self.emit(RunStart(kind=kind, prompt=prompt))  # type: ignore[arg-type]

    def user(self, text: str, kind: UserKind) -> None:
        self.history.append(UserMessage(content=text, kind=kind))
        self.emit(UserMessageEvent(text=text, kind=kind))

    def reply(self, message: AssistantMessage) -> None:
        self.emit(TextDelta(text=message.text))
        self.history.append(message)
        self.emit(MessageEnd(message=message))

    def tool(self, call: ToolCall, result: ToolResult, duration: float, history: bool) -> None:
        self.emit(ToolStart(call=call))
        message = ToolResultMessage(call.id, call.name, result.content, result.is_error)
        if history:
            self.history.append(message)
        self.emit(ToolEnd(call=call, result=result, duration_s=duration, message=message))


def read_call() -> ToolCall:
    args = {"path": "README.md", "offset": 2}
    return ToolCall(id="call_1", name="read", arguments=args, raw_arguments=json.dumps(args))


def broken_call() -> ToolCall:
    return ToolCall(
        id="call_2",
        name="bash",
        arguments={},
        raw_arguments='{"command": "ls',
        arguments_error="Unterminated string starting at: line 1 column 13",
    )


def play_everything(bus: EventBus, writer: SessionWriter) -> Scenario:
    """Tool calls, steer, follow-up, a shell run, a model change, an abort and a failure."""
    s = Scenario(bus)
    s.start("run-1", prompt="look around")
    s.user("look around", "prompt")
    s.emit(TurnStart(turn=1))
    calls = [read_call(), broken_call()]
    s.reply(
        AssistantMessage(
            text="Let me look.",
            thinking="The user wants an overview.",
            tool_calls=calls,
            finish_reason="tool_calls",
            usage=Usage(input_tokens=120, output_tokens=30, reasoning_tokens=7, cached_tokens=64),
            model="model-a",
        )
    )
    details: dict[Any, Any] = {
        "path": "README.md",
        "total_lines": 3,
        "full_output": Path("/tmp/out.txt"),  # not JSON: must be dropped
        "ratio": math.nan,  # not JSON either
        "nested": {"ok": [1, 2.5, "x", None, True, object()]},
        7: "non-string key",
    }
    s.tool(calls[0], ToolResult("# Sample\n…", details=details), 0.0125, history=True)
    s.tool(
        calls[1],
        ToolResult.error("invalid arguments: bad JSON", invalid=True),
        0.0,
        history=True,
    )
    s.emit(TurnEnd(turn=1))
    s.user("also check tests", "steer")
    s.emit(TurnStart(turn=2))
    s.reply(AssistantMessage(text="It is a tiny project.", usage=Usage(5, 6), model="model-a"))
    s.emit(TurnEnd(turn=2))
    s.user("then summarise", "follow_up")
    s.emit(TurnStart(turn=3))
    s.reply(AssistantMessage(text="Summary: small.", model="model-a"))
    s.emit(TurnEnd(turn=3))
    s.emit(RunEnd(stop_reason="completed", turns=3))

    # A `!` line: its bash result must not become a message.
    s.start("run-2", kind="shell", prompt="!ls")
    shell_call = ToolCall(id="shell-2", name="bash", arguments={"command": "ls"})
    s.tool(shell_call, ToolResult("README.md\nsum.py", details={"exit_code": 0}), 0.02, False)
    s.emit(RunEnd(stop_reason="completed"))

    writer.record_model_change("model-b")
    s.emit(QueueUpdate(entries=[QueueEntryView(id=1, text="x", mode="steer", shell=False)]))
    s.emit(Notice(text="just a notice"))

    s.start("run-3", prompt="write a poem")
    s.user("write a poem", "prompt")
    s.emit(TurnStart(turn=1))
    s.reply(AssistantMessage(text="Roses are", finish_reason="aborted", model="model-b"))
    s.emit(TurnEnd(turn=1))
    s.emit(RunEnd(stop_reason="aborted", turns=1))

    s.start("run-4", prompt="again")
    s.user("again", "prompt")
    s.emit(RunEnd(stop_reason=None, error="HTTP 500: the server fell over"))
    return s


def test_recorded_session_reads_back_to_the_same_history(data_home: Path, workspace: Path) -> None:
    bus = EventBus()
    writer = SessionWriter.create(workspace, "model-a")
    bus.subscribe(SessionRecorder(writer))
    scenario = play_everything(bus, writer)
    writer.close()

    loaded = load_session(writer.path)
    assert loaded.warnings == []
    assert loaded.history == scenario.history
    assert [type(e) for e in loaded.entries] == [
        UserEntry,
        AssistantEntry,
        ToolResultEntry,
        ToolResultEntry,
        UserEntry,
        AssistantEntry,
        UserEntry,
        AssistantEntry,
        ModelChangeEntry,
        UserEntry,
        AssistantEntry,
        InterruptEntry,
        UserEntry,
        ErrorEntry,
    ]
    kinds = [e.message.kind for e in loaded.entries if isinstance(e, UserEntry)]
    assert kinds == ["prompt", "steer", "follow_up", "prompt", "prompt"]
    first_result = loaded.entries[2]
    assert isinstance(first_result, ToolResultEntry)
    assert first_result.details == {
        "path": "README.md",
        "total_lines": 3,
        "nested": {"ok": [1, 2.5, "x", None, True]},
    }
    assert first_result.duration_s == pytest.approx(0.0125)
    errors = [e for e in loaded.entries if isinstance(e, ErrorEntry)]
    assert errors[0].text == "HTTP 500: the server fell over"
    assert loaded.model == "model-b"
    assert loaded.header.model == "model-a"


def test_header_and_line_format(workspace: Path) -> None:
    bus = EventBus()
    writer = SessionWriter.create(workspace, "model-a")
    bus.subscribe(SessionRecorder(writer))
    play_everything(bus, writer)
    writer.close()

    raw = writer.path.read_bytes()
    assert raw.endswith(b"\n")
    lines = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
    header = lines[0]
    assert set(header) == {"type", "version", "id", "started", "workspace", "model"}
    assert header["type"] == "header" and header["version"] == 1
    assert re.fullmatch(r"[0-9a-f]{12}", header["id"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", header["started"])
    assert header["workspace"] == str(workspace.resolve())
    assert header["model"] == "model-a"
    # Each entry's place in the tree: one branch here, each hanging from the one before.
    parent = None
    for line in lines[1:]:
        entry_id = line.pop("id")
        assert re.fullmatch(r"[0-9a-f]{12}", entry_id)
        assert line.pop("parent_id") == parent
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line.pop("ts"))
        parent = entry_id
    assert lines[1] == {"type": "user", "kind": "prompt", "content": "look around"}
    assistant = lines[2]
    assert assistant["tool_calls"][1] == {
        "id": "call_2",
        "name": "bash",
        "arguments": {},
        "raw_arguments": '{"command": "ls',
        "arguments_error": "Unterminated string starting at: line 1 column 13",
    }
    assert assistant["usage"] == {
        "input_tokens": 120,
        "output_tokens": 30,
        "reasoning_tokens": 7,
        "cached_tokens": 64,
    }
    assert {"type": "model_change", "model": "model-b"} in lines
    assert {"type": "interrupt"} in lines
    assert lines[-1] == {"type": "error", "text": "HTTP 500: the server fell over"}
    assert not any(line.get("call_id") == "shell-2" for line in lines)
    assert "README.md\\nsum.py" not in raw.decode()
    # The file lives in the workspace's folder and is named <started>_<id>.jsonl.
    assert writer.path.parent == workspace_dir(workspace)
    assert writer.path.name.endswith(f"_{header['id']}.jsonl")


def test_each_line_is_written_in_order_and_fsynced_at_turn_and_run_end_off_the_caller(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(threading.current_thread().name)
        real_fsync(fd)

    monkeypatch.setattr(session_writer.os, "fsync", counting_fsync)
    bus = EventBus()
    writer = SessionWriter.create(workspace, "m")
    bus.subscribe(SessionRecorder(writer))
    writer.drain()
    after_create = len(synced)  # the header's, and the folder's
    s = Scenario(bus)
    s.start("run-1")
    s.user("hello", "prompt")
    writer.drain()
    # Readable through another handle before any fsync: it was written and flushed.
    last = json.loads(writer.path.read_text().splitlines()[-1])
    assert {k: last[k] for k in ("type", "kind", "content")} == {
        "type": "user",
        "kind": "prompt",
        "content": "hello",
    }
    s.reply(AssistantMessage(text="hi"))
    writer.drain()
    assert json.loads(writer.path.read_text().splitlines()[-1])["text"] == "hi"
    assert len(synced) == after_create
    s.emit(TurnEnd(turn=1))
    writer.drain()
    assert len(synced) == after_create + 1
    # Nothing was written since: the run's end needs no second fsync...
    s.emit(RunEnd(stop_reason="completed"))
    writer.drain()
    assert len(synced) == after_create + 1
    # ...but an interrupt entry written at the run's end is fsynced.
    s.start("run-2")
    s.emit(RunEnd(stop_reason="aborted"))
    writer.drain()
    assert len(synced) == after_create + 2
    writer.close()
    assert writer.closed
    # Every fsync ran on the writer's thread, none on the caller's.
    assert synced and all(name.startswith("session-writer-") for name in synced)


def test_events_after_close_are_ignored(workspace: Path) -> None:
    bus = EventBus()
    writer = SessionWriter.create(workspace, "m")
    bus.subscribe(SessionRecorder(writer))
    writer.close()
    s = Scenario(bus)
    s.start("run-1")
    s.user("too late", "prompt")
    assert load_session(writer.path).entries == []
    with pytest.raises(ValueError, match="closed"):
        writer.record_interrupt()


def test_open_existing_appends_to_a_resumed_session(workspace: Path) -> None:
    with SessionWriter.create(workspace, "m") as first:
        first.record_user(UserMessage("one"))
        first.record_assistant(AssistantMessage(text="1"))
    resumed = SessionWriter.open_existing(first.path)
    assert resumed.id == first.id
    assert resumed.model == "m"
    resumed.record_model_change("m2")
    resumed.record_user(UserMessage("two", kind="prompt"))
    resumed.close()
    loaded = load_session(first.path)
    assert loaded.history == [
        UserMessage("one"),
        AssistantMessage(text="1"),
        UserMessage("two"),
    ]
    assert loaded.model == "m2"
    # Only one header, at the top.
    assert loaded.path.read_text().count('"type":"header"') == 1


def test_open_existing_trims_a_torn_last_line_before_appending(workspace: Path) -> None:
    with SessionWriter.create(workspace, "m") as first:
        first.record_user(UserMessage("kept"))
    with open(first.path, "ab") as file:
        file.write(b'{"type":"assistant","text":"half a rep')
    assert load_session(first.path).warnings  # torn, reported

    with SessionWriter.open_existing(first.path) as resumed:
        resumed.record_user(UserMessage("after resume"))
    loaded = load_session(first.path)
    assert loaded.warnings == []
    assert loaded.history == [UserMessage("kept"), UserMessage("after resume")]


def test_open_existing_finishes_a_whole_last_object_missing_its_newline(workspace: Path) -> None:
    with SessionWriter.create(workspace, "m") as first:
        first.record_user(UserMessage("one"))
    with open(first.path, "ab") as file:
        file.write(b'{"type":"user","kind":"steer","content":"whole"}')
    with SessionWriter.open_existing(first.path) as resumed:
        resumed.record_user(UserMessage("two"))
    loaded = load_session(first.path)
    assert loaded.warnings == []
    assert loaded.history == [
        UserMessage("one"),
        UserMessage("whole", kind="steer"),
        UserMessage("two"),
    ]


def test_text_that_is_not_utf8_safe_round_trips(workspace: Path) -> None:
    odd = "bytes \udcff from a binary file, and ünïcödé ✓"
    with SessionWriter.create(workspace, "m") as writer:
        writer.record_user(UserMessage("ünïcödé ✓"))
        writer.record_tool_result(ToolResultMessage("c1", "read", odd), {"note": odd}, 1.0)
    loaded = load_session(writer.path)
    assert loaded.history[1] == ToolResultMessage("c1", "read", odd)
    # Ordinary non-ASCII text stays readable in the file.
    assert "ünïcödé ✓" in writer.path.read_text(encoding="utf-8", errors="replace")


def test_files_are_private_to_the_user(workspace: Path) -> None:
    with SessionWriter.create(workspace, "m") as writer:
        pass
    assert writer.path.stat().st_mode & 0o077 == 0


def test_writer_never_takes_a_key(workspace: Path) -> None:
    # The API has no place for one: a key can only reach the file as conversation text.
    for method in (SessionWriter.create, SessionWriter.open_existing):
        names: Any = method.__code__.co_varnames[: method.__code__.co_argcount]
        assert not any("key" in name for name in names)
