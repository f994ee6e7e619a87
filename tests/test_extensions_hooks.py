"""Extensions' hooks against the loopback server: `tool_call` blocking a call (the model
gets the reason), handlers that raise (an `extension_error`, and the run goes on), files
that fail to load (a notice naming the file; ink goes on)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession
from tests.extension_helpers import write_extension
from tests.scripted_server import ScriptedServer, text_reply, tool_reply

GUARD = """
from ink_tui.extensions import block


def setup(ink):
    async def check(call):
        if call.name == "bash":
            return block(f"no shell in this repository (asked: {call.arguments['command']})")
        return None

    ink.on("tool_call", check)
"""


@pytest.fixture
def extensions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "config" / "ink" / "extensions"


async def open_session(server: ScriptedServer, workspace: Path) -> AgentSession:
    return await AgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="test-key"
    )


async def test_a_tool_call_hook_blocks_bash_and_the_model_gets_the_reason(
    server: ScriptedServer, workspace: Path, extensions_dir: Path
) -> None:
    write_extension(extensions_dir, "guard", GUARD)
    server.push(
        tool_reply([("bash", {"command": "touch ran"}, "c1"), ("read", {"path": "README.md"})]),
        text_reply("understood"),
    )
    async with await open_session(server, workspace) as session:
        seen: list[dict[str, Any]] = []
        session.subscribe(seen.append)
        result = await session.prompt("make a file")
    assert result.stop_reason == "completed"  # type: ignore[union-attr]
    assert not (workspace / "ran").exists()
    tools = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert tools[0] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "Blocked by extension 'guard': no shell in this repository (asked: touch ran)",
    }
    assert "Sample" in tools[1]["content"]  # the other call ran
    [end] = [e for e in seen if e["type"] == "tool_execution_end" and e["call_id"] == "c1"]
    assert end["is_error"]


async def test_a_raising_handler_becomes_extension_error_and_the_run_goes_on(
    server: ScriptedServer, workspace: Path, extensions_dir: Path
) -> None:
    write_extension(
        extensions_dir,
        "flaky",
        """
        async def setup(ink):
            def boom(event):
                raise RuntimeError("counter overflow")

            async def later_boom(event):
                await __import__("asyncio").sleep(0)
                raise KeyError("turn")

            ink.on("turn_start", boom)
            ink.on("agent_end", later_boom)
        """,
    )
    server.push(text_reply("still fine"))
    async with await open_session(server, workspace) as session:
        seen: list[dict[str, Any]] = []
        session.subscribe(seen.append)
        result = await session.prompt("hi")
        await asyncio.sleep(0.05)  # handlers run just after the event
    assert result.stop_reason == "completed"  # type: ignore[union-attr]
    errors = [e for e in seen if e["type"] == "extension_error"]
    assert [(e["extension"], e["event"]) for e in errors] == [
        ("flaky", "turn_start"),
        ("flaky", "agent_end"),
    ]
    assert errors[0]["error"] == "RuntimeError: counter overflow"
    notices = [e["text"] for e in seen if e["type"] == "notice" and e["kind"] == "extension_error"]
    assert notices[0] == "Extension 'flaky' failed in turn_start: RuntimeError: counter overflow"
    assert (
        "".join(e["delta"]["text"] for e in seen if e["type"] == "message_update") == "still fine"
    )


async def test_a_tool_call_handler_that_raises_blocks_the_call(
    server: ScriptedServer, workspace: Path, extensions_dir: Path
) -> None:
    write_extension(
        extensions_dir,
        "broken_guard",
        """
        def setup(ink):
            ink.on("tool_call", lambda call: 1 / 0)
        """,
    )
    server.push(tool_reply([("bash", {"command": "touch ran"}, "c1")]), text_reply("ok"))
    async with await open_session(server, workspace) as session:
        seen: list[dict[str, Any]] = []
        session.subscribe(seen.append)
        await session.prompt("go")
    assert not (workspace / "ran").exists()
    [tool] = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert tool["content"].startswith("Blocked by extension 'broken_guard': its check")
    assert [e["event"] for e in seen if e["type"] == "extension_error"] == ["tool_call"]


async def test_files_that_fail_to_load_are_named_and_the_others_load(
    server: ScriptedServer, workspace: Path, extensions_dir: Path
) -> None:
    write_extension(extensions_dir, "a_syntax", "def setup(ink):\n    return (\n")
    write_extension(extensions_dir, "b_raises", "def setup(ink):\n    raise ValueError('no')\n")
    write_extension(extensions_dir, "c_nosetup", "X = 1\n")
    write_extension(extensions_dir, "d_bad_event", "def setup(ink):\n    ink.on('nope', print)\n")
    write_extension(extensions_dir, "e_good", "def setup(ink):\n    ink.on('agent_start', print)\n")
    write_extension(extensions_dir, "_helper", "raise SystemExit('never imported')\n")
    seen: list[dict[str, Any]] = []
    session = await open_session(server, workspace)
    try:
        assert session.extensions is not None
        assert list(session.extensions.loaded) == ["e_good"]
        # A failed setup leaves nothing registered behind.
        assert session.extensions.commands == {}
        session.subscribe(seen.append)
        server.push(text_reply("fine"))
        result = await session.prompt("hi")
        assert result.stop_reason == "completed"  # type: ignore[union-attr]
    finally:
        await session.aclose()


async def test_load_failures_are_notices_naming_the_file(
    server: ScriptedServer, workspace: Path, extensions_dir: Path
) -> None:
    from ink_tui.control.bus import EventBus
    from ink_tui.core.events import Notice
    from ink_tui.extensions.host import ExtensionHost
    from tests.run_helpers import make_controller

    write_extension(extensions_dir, "b_raises", "def setup(ink):\n    raise ValueError('no')\n")
    path = write_extension(extensions_dir, "a_syntax", "def setup(ink):\n    return (\n")
    controller, recorder = make_controller(server, workspace)
    assert isinstance(controller.bus, EventBus)
    host = ExtensionHost(controller)
    assert host.load_all([extensions_dir / "a_syntax.py", extensions_dir / "b_raises.py"]) == []
    notices = [e for e in recorder.events if isinstance(e, Notice)]
    assert [n.kind for n in notices] == ["extension_error", "extension_error"]
    assert str(path) in notices[0].text or "a_syntax.py" in notices[0].text
    assert "SyntaxError" in notices[0].text
    assert notices[1].text.endswith("was not loaded: ValueError: no")
    await controller.aclose()
