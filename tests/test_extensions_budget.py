"""The extension budget's rules with a clock the test moves (the per-second budget counts
calls within a window, never waits for one), and what the Python API and `ink serve`
tell a program about an extension that did not load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ink_tui import AgentSession
from ink_tui.extensions.budget import Budget
from tests.extension_helpers import write_extension
from tests.scripted_server import ScriptedServer, text_reply


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_rate_counts_calls_in_any_one_second() -> None:
    clock = Clock()
    budget = Budget(per_second=3, clock=clock)
    assert [budget.spend("x", trigger=False) for _ in range(3)] == [None, None, None]
    clock.now += 0.999
    reason = budget.spend("x", trigger=False)
    assert reason is not None and "more than 3 notices" in reason
    # Stopped until the next user input, however much time passes.
    clock.now += 60
    assert budget.spend("x", trigger=False) == reason
    assert budget.spend("other", trigger=False) is None  # per extension
    budget.user_input()
    assert budget.spend("x", trigger=False) is None


def test_a_steady_pace_under_the_rate_is_never_stopped() -> None:
    clock = Clock()
    budget = Budget(per_second=3, clock=clock)
    for _ in range(1000):
        assert budget.spend("x", trigger=False) is None
        clock.now += 0.34


def test_turns_are_counted_per_user_prompt_and_an_abort_halts_them() -> None:
    clock = Clock()
    budget = Budget(turns=2, clock=clock)
    for _ in range(2):
        assert budget.spend("x", trigger=True) is None
        clock.now += 10  # far apart: the rate is not what stops it
    assert budget.spend("x", trigger=False) is None  # a notice is not a turn
    reason = budget.spend("x", trigger=True)
    assert reason is not None and "set off 2 model turns" in reason
    budget.user_input()
    assert budget.spend("x", trigger=True) is None
    budget.aborted()
    assert budget.spend("x", trigger=False) is None  # a notice after an abort is fine
    halted = budget.spend("y", trigger=True)
    assert halted is not None and halted.startswith("the user aborted the run")
    budget.user_input()
    assert budget.spend("y", trigger=True) is None


@pytest.fixture
def extensions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "config" / "ink" / "extensions"


async def test_the_api_warns_of_a_load_failure_and_its_first_subscriber_sees_the_event(
    server: ScriptedServer, workspace: Path, extensions_dir: Path
) -> None:
    write_extension(extensions_dir, "broken", "def setup(ink):\n    raise KeyboardInterrupt\n")
    session = await AgentSession.open(
        workspace, base_url=server.base_url, model="scripted-model", api_key="k"
    )
    try:
        assert [w for w in session.warnings if "broken.py" in w] == [
            f"extension {extensions_dir / 'broken.py'} was not loaded: KeyboardInterrupt"
        ]
        first: list[Any] = []
        second: list[Any] = []
        session.subscribe(first.append)
        session.subscribe(second.append)
        assert [(e["type"], e["seq"]) for e in first] == [("extension_error", 1), ("notice", 2)]
        assert second == []  # held once, for the first
        server.push(text_reply("fine"))
        await session.prompt("hi")
        assert first[2:] == second and second[0]["seq"] == 3
    finally:
        await session.aclose()


async def test_an_ink_serve_client_sees_a_load_failure_from_the_start_of_the_stream(
    server: ScriptedServer, workspace: Path, extensions_dir: Path
) -> None:
    from tests.serve_helpers import read_sse, serve

    write_extension(extensions_dir, "broken", "import no_such_module_here\n")
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
        ) as stream:
            events = await read_sse(stream, lambda seen: len(seen) >= 2)
    assert [(e.event, e.id) for e in events[:2]] == [("extension_error", 1), ("notice", 2)]
    assert events[0].data["extension"] == "broken"
    assert events[0].data["error"].startswith("ModuleNotFoundError")
