"""The two example extensions (examples/extensions/) at work against the loopback
server: the guard that keeps writes inside the workspace, and the reminder that asks
for the tests after an edit."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ink_tui import AgentSession
from ink_tui.extensions import ToolCallInfo
from tests.extension_helpers import marked, user_messages
from tests.scripted_server import ScriptedServer, text_reply, tool_reply

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "extensions"


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "config" / "ink" / "extensions"
    folder.mkdir(parents=True)

    def copy(name: str) -> None:
        shutil.copy(EXAMPLES / f"{name}.py", folder / f"{name}.py")

    return copy


async def run(server: ScriptedServer, workspace: Path, prompt: str) -> list[dict[str, Any]]:
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="test-key"
    ) as session:
        seen: list[dict[str, Any]] = []
        session.subscribe(seen.append)
        await session.prompt(prompt)
    return seen


def tool_results(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


# -- the guard -----------------------------------------------------------------------


async def test_guard_blocks_writes_outside_the_workspace_and_lets_inside_ones_run(
    server: ScriptedServer, workspace: Path, install: Callable[[str], None], tmp_path: Path
) -> None:
    install("guard")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workspace / "link").symlink_to(elsewhere)  # inside by name, outside in fact
    server.push(
        tool_reply(
            [
                ("write", {"path": "../escape.txt", "content": "x"}, "up"),
                ("write", {"path": "link/through.txt", "content": "x"}, "link"),
                ("bash", {"command": f"echo hi > {elsewhere}/redirect.txt"}, "redirect"),
                ("bash", {"command": "cd . && rm -rf ~/important"}, "rm"),
                ("write", {"path": "notes/inside.txt", "content": "fine"}, "inside"),
                ("bash", {"command": "ls 2>/dev/null > listing.txt"}, "listing"),
            ]
        ),
        text_reply("ok"),
    )
    await run(server, workspace, "tidy up")
    results = tool_results(server.requests[1])
    for call_id in ("up", "link", "redirect", "rm"):
        assert results[call_id].startswith("Blocked by extension 'guard': "), call_id
        assert "is outside the workspace" in results[call_id]
    assert not (tmp_path / "escape.txt").exists()
    assert list(elsewhere.iterdir()) == []
    assert (workspace / "notes" / "inside.txt").read_text() == "fine"
    assert (workspace / "listing.txt").exists()
    assert "Blocked" not in results["inside"] + results["listing"]


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("echo x > out.txt", ["out.txt"]),
        ("echo x>>/tmp/a", ["/tmp/a"]),
        ("make 2>&1 | tee -a build.log", ["1", "build.log"]),
        ("cp /etc/hosts ./hosts && mv a ../b", ["./hosts", "../b"]),
        ("FOO=1 sudo rm -f /x /y; touch z", ["/x", "/y", "z"]),
        ("sed -i 's/a/b/' ../f.txt", ["../f.txt"]),
        ("dd if=/dev/zero of=/tmp/disk bs=1", ["/tmp/disk"]),
        ("cat /etc/passwd | grep root", []),
        ("python -m pytest -q", []),
    ],
)
def test_guard_finds_what_a_command_writes(command: str, targets: list[str]) -> None:
    assert load_example("guard").bash_targets(command) == targets


def test_guard_resolves_home_and_variables(workspace: Path) -> None:
    guard = load_example("guard")
    assert guard.check(ToolCallInfo("bash", {"command": "rm -rf ~"}), workspace)
    assert guard.check(ToolCallInfo("bash", {"command": "echo > $HOME/x"}), workspace)
    assert guard.check(ToolCallInfo("edit", {"path": str(workspace / "sum.py")}), workspace) is None
    assert guard.check(ToolCallInfo("read", {"path": "/etc/passwd"}), workspace) is None


# -- the reminder --------------------------------------------------------------------


async def test_reminder_asks_for_the_tests_after_an_edit(
    server: ScriptedServer, workspace: Path, install: Callable[[str], None]
) -> None:
    install("reminder")
    server.push(
        tool_reply([("write", {"path": "new.py", "content": "x = 1\n"})]),
        tool_reply([("write", {"path": "other.py", "content": "y = 2\n"})]),
        text_reply("Written."),
        text_reply("Tests pass."),
    )
    seen = await run(server, workspace, "add a constant")
    assert len(server.requests) == 4  # one reminder, though two files were written
    reminder = marked("reminder", "task", load_example("reminder").MESSAGE)
    assert user_messages(server.requests[3]) == ["add a constant", reminder]
    queued = [e for e in seen if e["type"] == "queue_update" and e["entries"]]
    assert queued[0]["entries"][0]["source"] == "reminder"


async def test_reminder_stays_quiet_when_the_user_asked_for_tests(
    server: ScriptedServer, workspace: Path, install: Callable[[str], None]
) -> None:
    install("reminder")
    server.push(
        tool_reply([("write", {"path": "new.py", "content": "x = 1\n"})]),
        text_reply("Written, and the tests pass."),
    )
    await run(server, workspace, "add a constant and run the tests")
    assert len(server.requests) == 2
