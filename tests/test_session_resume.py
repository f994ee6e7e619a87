"""Sessions recorded from a real RunController against the loopback server, and resumed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ink_tui.control.controller import RunController
from ink_tui.core.provider_api import ModelRequest
from ink_tui.providers.openai_compat import OpenAICompatProvider
from ink_tui.providers.openai_request import encode_messages
from ink_tui.session.entries import AssistantEntry, InterruptEntry, ToolResultEntry, UserEntry
from ink_tui.session.input_history_store import InputHistoryStore
from ink_tui.session.model_config import resolve_model_config
from ink_tui.session.pending_input import PendingEntry, PendingInputStore
from ink_tui.session.session_reader import load_session
from ink_tui.session.session_recorder import SessionRecorder
from ink_tui.session.session_writer import SessionWriter
from ink_tui.tools import default_tools
from tests.run_helpers import Recorder, make_controller
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply

SECRET_KEY = "sk-ink-test-SECRET-5f0c9d2e7a1b4c3d"


@pytest.fixture(autouse=True)
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def record(controller: RunController, writer: SessionWriter) -> None:
    controller.bus.subscribe(SessionRecorder(writer))


async def prompt(controller: RunController, text: str) -> None:
    controller.submit(text)
    await controller.wait_idle()


def files_under(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}


def wire(message: Any) -> dict[str, Any]:
    """One history message as the provider sends it."""
    return encode_messages(ModelRequest(system_prompt="", messages=[message]))[0]


async def test_session_holds_exactly_the_controllers_history(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply(
            [("read", {"path": "README.md"}), ("ls", {}), ("read", {"path": "nope.txt"})],
            text="Let me look.",
        ),
        text_reply("It is a tiny project."),
        text_reply("Still tiny."),
    )
    controller, events = make_controller(server, workspace)
    writer = SessionWriter.create(workspace, controller.provider.model)
    record(controller, writer)
    await prompt(controller, "what is this?")
    await prompt(controller, "!echo shell output")  # not part of the conversation
    await prompt(controller, "and now?")
    writer.close()
    await controller.aclose()

    assert any(end.call.id == "shell-2" for end in events.of("tool_end"))
    loaded = load_session(writer.path)
    assert loaded.warnings == []
    assert loaded.history == controller.history
    assert len(loaded.history) == 8  # user, assistant, 3 results, assistant, user, assistant
    assert "shell output" not in writer.path.read_text()
    results = [e for e in loaded.entries if isinstance(e, ToolResultEntry)]
    assert [r.message.is_error for r in results] == [False, False, True]
    assert results[0].details["path"] == "README.md"
    assert results[0].duration_s > 0
    assert loaded.header.model == "scripted-model"


async def test_resumed_history_gives_the_same_next_request(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("read", {"path": "sum.py"})]),
        text_reply("It sums a list."),
        text_reply("Yes, any iterable."),
    )
    first, _ = make_controller(server, workspace)
    writer = SessionWriter.create(workspace, first.provider.model)
    record(first, writer)
    await prompt(first, "what does sum.py do?")
    await prompt(first, "does it take iterables?")
    writer.close()
    second_request = server.requests[-1]
    reply = first.history[-1]

    loaded = load_session(writer.path)
    server.push(text_reply("Resumed fine."))
    resumed, _ = make_controller(server, workspace)
    resumed.history = loaded.history
    # A resumed app appends to the same file.
    with SessionWriter.open_existing(writer.path) as appender:
        record(resumed, appender)
        await prompt(resumed, "third question")
    await resumed.aclose()

    third = server.requests[-1]["messages"]
    count = len(second_request["messages"])
    assert third[:count] == second_request["messages"]
    assert third[count] == wire(reply) == {"role": "assistant", "content": "Yes, any iterable."}
    assert third[count + 1 :] == [{"role": "user", "content": "third question"}]

    # The same continuation without a restart sends a byte-identical request.
    server.push(text_reply("Resumed fine."))
    await prompt(first, "third question")
    await first.aclose()
    assert server.requests[-1] == server.requests[-2]

    # And the file now holds the whole conversation, resumed part included.
    assert load_session(writer.path).history == first.history


async def test_an_interrupt_is_recorded_with_the_partial_reply(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("Partial answer that never ends", pieces=4, gate=gate))
    controller, events = make_controller(server, workspace)
    writer = SessionWriter.create(workspace, "scripted-model")
    record(controller, writer)
    controller.submit("go")
    await asyncio.to_thread(gate.reached.wait, 10)
    await events.wait_for(lambda e: e.type == "text_delta")
    controller.interrupt()
    await controller.wait_idle()
    writer.close()
    await controller.aclose()

    loaded = load_session(writer.path)
    assert loaded.history == controller.history
    assert [type(e) for e in loaded.entries] == [UserEntry, AssistantEntry, InterruptEntry]
    partial = loaded.entries[1]
    assert isinstance(partial, AssistantEntry)
    assert partial.message.finish_reason == "aborted"
    assert partial.message.text.startswith("Partial")


async def test_no_api_key_in_any_file_the_store_writes(
    server: ScriptedServer, workspace: Path, data_home: Path
) -> None:
    config = resolve_model_config(
        base_url=server.base_url, model="scripted-model", api_key=SECRET_KEY, environ={}
    )
    assert config.api_key == SECRET_KEY and config.base_url is not None
    provider = OpenAICompatProvider(config.base_url, config.model or "", config.api_key)
    controller = RunController(
        provider=provider,
        tools=default_tools(),
        workspace=workspace,
        system_prompt="You are a test.",
    )
    events = Recorder()
    controller.bus.subscribe(events)
    server.push(tool_reply([("bash", {"command": "echo hello"})]), text_reply("done"))
    writer = SessionWriter.create(workspace, provider.model)
    record(controller, writer)
    await prompt(controller, "say hello")
    writer.record_model_change("other-model")
    PendingInputStore(writer.path).save([PendingEntry("queued")], "draft")
    InputHistoryStore(workspace).append("say hello")
    writer.close()
    await controller.aclose()

    # The key was live in this process: it went out with every request.
    assert all(SECRET_KEY in " ".join(h.values()) for h in server.request_headers)
    written = files_under(data_home)
    assert len(written) == 3  # the session, its pending input, the input history
    for path, data in written.items():
        assert SECRET_KEY.encode() not in data, path
        assert SECRET_KEY[8:].encode() not in data, path
