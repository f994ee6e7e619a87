"""Extensions that misbehave, against the real `ink --mode rpc` process: `sys.exit()` or
`KeyboardInterrupt` anywhere ink calls them (ink keeps running and reports an
`extension_error`; a guard that fails refuses the call), a file that fails to load (an
event at start and `get_state`), and loops (an `agent_settled` handler that starts a
turn every time, a `notice` handler that notifies): stopped by their budget, and a
user's abort is final. Counts of events, never seconds."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ink_tui.extensions.budget import MAX_CALLS_PER_SECOND, MAX_TURNS_PER_PROMPT
from ink_tui.rpc_client import RpcClient
from tests.extension_helpers import write_extension
from tests.rpc_process import isolated_env, run_rpc, spawn_rpc
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


@pytest.fixture
def extensions(env: dict[str, str]) -> Path:
    """The user's extensions folder: they load without a trust question."""
    return Path(env["XDG_CONFIG_HOME"]) / "ink" / "extensions"


@pytest.fixture
async def spawn(server: ScriptedServer, workspace: Path, env: dict[str, str]) -> AsyncIterator[Any]:
    clients: list[RpcClient] = []

    async def start(*flags: str) -> RpcClient:
        client = await spawn_rpc(server, workspace, env, *flags)
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()


def errors(ink: RpcClient) -> list[dict[str, Any]]:
    return [e for e in ink.seen if e["type"] == "extension_error"]


async def still_running(ink: RpcClient) -> dict[str, Any]:
    """A round trip: ink answers, so it is alive and its loop turns."""
    state: dict[str, Any] = await ink.command("get_state")
    assert ink.process.returncode is None
    return state


# -- SystemExit and KeyboardInterrupt at every boundary -----------------------------------

HANDLERS = {
    "sync handler": ("agent_start", "def on(event):\n    sys.exit(3)", "SystemExit: 3"),
    "async handler": (
        "turn_end",
        "async def on(event):\n    await asyncio.sleep(0)\n    sys.exit(4)",
        "SystemExit: 4",
    ),
    "keyboard interrupt": (
        "agent_end",
        "def on(event):\n    raise KeyboardInterrupt",
        "KeyboardInterrupt",
    ),
}


@pytest.mark.parametrize("kind", list(HANDLERS))
async def test_an_event_handler_that_exits_is_an_extension_error_and_ink_goes_on(
    kind: str, spawn: Any, server: ScriptedServer, extensions: Path
) -> None:
    event, handler, described = HANDLERS[kind]
    source = f"import asyncio, sys\n\n{handler}\n\ndef setup(ink):\n    ink.on({event!r}, on)\n"
    write_extension(extensions, "quitter", source)
    server.push(text_reply("first"), text_reply("second"))
    ink = await spawn()
    await ink.command("prompt", message="hi")
    assert (await ink.wait_settled())["stop_reason"] == "completed"
    error = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert (error["extension"], error["event"], error["error"]) == ("quitter", event, described)
    # Still there, and a second prompt runs (the handler fails again, reported again).
    await still_running(ink)
    await ink.command("prompt", message="again")
    assert (await ink.wait_settled())["stop_reason"] == "completed"
    assert await ink.close() == 0


GUARDS = {
    "argparse error": (
        "def check(call):\n    argparse.ArgumentParser(prog='guard').parse_args(['--nope'])",
        "SystemExit: 2",
    ),
    "async sys.exit": (
        "async def check(call):\n    await asyncio.sleep(0)\n    sys.exit(7)",
        "SystemExit: 7",
    ),
    "keyboard interrupt": ("def check(call):\n    raise KeyboardInterrupt", "KeyboardInterrupt"),
    # Left to go through (it may be the check's coroutine being closed): the scheduler
    # refuses the call all the same, in its own words.
    "async generator exit": (
        "async def check(call):\n    await asyncio.sleep(0)\n    raise GeneratorExit('odd')",
        "GeneratorExit: odd",
    ),
}


@pytest.mark.parametrize("kind", list(GUARDS))
async def test_a_guard_that_exits_refuses_the_call_and_ink_goes_on(
    kind: str, spawn: Any, server: ScriptedServer, workspace: Path, extensions: Path
) -> None:
    check, described = GUARDS[kind]
    source = f"import argparse, asyncio, sys\n\n{check}\n\n"
    source += "def setup(ink):\n    ink.on('tool_call', check)\n"
    write_extension(extensions, "guard", source)
    server.push(tool_reply([("bash", {"command": "touch ran"}, "c1")]), text_reply("ok"))
    ink = await spawn()
    await ink.command("prompt", message="make a file")
    assert (await ink.wait_settled())["stop_reason"] == "completed"
    assert not (workspace / "ran").exists()  # failed closed: the call never ran
    [tool] = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    refused = "Blocked by extension 'guard': its check of this call"
    if "generator" in kind:
        refused = "Blocked: the check before running bash"
    assert tool["content"] == f"{refused} failed ({described}), so the call was not run."
    [error] = errors(ink)
    assert (error["event"], error["error"]) == ("tool_call", described)
    await still_running(ink)
    assert await ink.close() == 0


@pytest.mark.parametrize(
    ("handler", "described"),
    [
        ("def quit(argument):\n    sys.exit(int(argument))", "SystemExit: 5"),
        ("async def quit(argument):\n    await asyncio.sleep(0)\n    sys.exit(6)", "SystemExit: 6"),
    ],
)
async def test_a_command_that_exits_is_an_extension_error_and_ink_goes_on(
    handler: str, described: str, spawn: Any, extensions: Path
) -> None:
    source = f"import asyncio, sys\n\n{handler}\n\n"
    source += "def setup(ink):\n    ink.register_command('/quit', quit)\n"
    write_extension(extensions, "cmd", source)
    ink = await spawn()
    assert await ink.command("prompt", message="/quit 5") == {"command": "/quit"}
    error = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert (error["event"], error["error"]) == ("/quit", described)
    await still_running(ink)
    assert await ink.close() == 0


@pytest.mark.parametrize(
    "source",
    [
        "raise KeyboardInterrupt\n",
        "def setup(ink):\n    raise KeyboardInterrupt\n",
        "import sys\n\nasync def setup(ink):\n    sys.exit(9)\n",
    ],
    ids=["at import", "in setup", "in async setup"],
)
async def test_an_extension_interrupted_while_loading_is_reported_and_ink_starts(
    source: str, spawn: Any, server: ScriptedServer, extensions: Path
) -> None:
    write_extension(extensions, "a_bad", source)
    write_extension(
        extensions, "b_good", "def setup(ink):\n    ink.register_command('/ok', print)\n"
    )
    ink = await spawn()
    error = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert (error["extension"], error["event"]) == ("a_bad", "setup")
    assert error["error"] in ("KeyboardInterrupt", "SystemExit: 9")
    state = await still_running(ink)
    assert state["extensions"]["loaded"] == ["b_good"]
    assert [f["extension"] for f in state["extensions"]["failed"]] == ["a_bad"]
    server.push(text_reply("fine"))
    await ink.command("prompt", message="hi")
    assert (await ink.wait_settled())["stop_reason"] == "completed"
    assert await ink.close() == 0


# -- load failures, seen by programs --------------------------------------------------------


async def test_a_load_failure_is_an_event_at_start_and_in_get_state(
    spawn: Any, extensions: Path
) -> None:
    write_extension(extensions, "broken", "import no_such_module_here\n")
    write_extension(extensions, "fine", "def setup(ink):\n    pass\n")
    ink = await spawn()
    error = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert error["seq"] == 1  # the very first event: nothing before it went unseen
    assert (error["extension"], error["event"]) == ("broken", "setup")
    assert error["error"] == "ModuleNotFoundError: No module named 'no_such_module_here'"
    state = await ink.command("get_state")
    assert state["extensions"] == {
        "loaded": ["fine"],
        "failed": [
            {
                "extension": "broken",
                "file": str(extensions / "broken.py"),  # outside HOME: as it is
                "error": "ModuleNotFoundError: No module named 'no_such_module_here'",
            }
        ],
        "stopped": [],
    }
    assert await ink.close() == 0


async def test_a_second_extension_of_the_same_name_is_a_failure_in_get_state(
    spawn: Any, workspace: Path, extensions: Path
) -> None:
    write_extension(extensions, "guard", "def setup(ink):\n    pass\n")
    write_extension(workspace / ".ink" / "extensions", "guard", "def setup(ink):\n    pass\n")
    ink = await spawn("--trust-extensions")
    error = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert error["error"] == "another extension is already called 'guard'"
    state = await ink.command("get_state")
    assert state["extensions"]["loaded"] == ["guard"]
    [failed] = state["extensions"]["failed"]
    assert failed["file"] == str(workspace / ".ink" / "extensions" / "guard.py")
    assert await ink.close() == 0


async def test_rpc_names_a_load_failure_on_stderr(
    server: ScriptedServer, workspace: Path, env: dict[str, str], extensions: Path
) -> None:
    write_extension(extensions, "broken", "def setup(ink):\n    raise ValueError('no key')\n")
    done = await asyncio.to_thread(run_rpc, ["--base-url", server.base_url], workspace, env)
    assert done.returncode == 0
    assert "broken.py was not loaded: ValueError: no key" in done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["type"] for e in events] == ["extension_error", "notice"]  # its notice follows
    assert events[0]["error"] == "ValueError: no key"


# -- loops ------------------------------------------------------------------------------------

SETTLE_LOOP = """
def setup(ink):
    def again(event):
        ink.send_message("once more", custom_type="task", deliver_as="follow_up", trigger_turn=True)

    ink.on("agent_settled", again)
"""


def runs_after(ink: RpcClient, index: int) -> int:
    return sum(1 for e in ink.seen[index:] if e["type"] == "agent_start")


async def test_a_settle_loop_stops_after_its_budget_and_says_so(
    spawn: Any, server: ScriptedServer, extensions: Path
) -> None:
    write_extension(extensions, "loop", SETTLE_LOOP)
    # Two prompts' worth (the user's run and the extension's), and more it never gets.
    server.push(*[text_reply(f"answer {n}") for n in range(2 * (1 + MAX_TURNS_PER_PROMPT) + 3)])
    ink = await spawn()
    await ink.command("prompt", message="go")
    stopped = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert stopped["extension"] == "loop" and stopped["event"] == "agent_settled"
    assert stopped["error"].startswith(
        f"stopped: it set off {MAX_TURNS_PER_PROMPT} model turns since the last user input"
    )
    state = await still_running(ink)
    assert state["busy"] is False
    assert state["extensions"]["stopped"][0]["extension"] == "loop"
    # The user's run and the extension's ten: no more.
    assert runs_after(ink, 0) == 1 + MAX_TURNS_PER_PROMPT
    assert len(server.requests) == 1 + MAX_TURNS_PER_PROMPT
    assert len(errors(ink)) == 1
    # The next user input lifts it: the loop may run its budget again.
    await ink.command("prompt", message="go on")
    await ink.wait_for(lambda e: e["type"] == "extension_error", after=len(ink.seen))
    assert (await still_running(ink))["busy"] is False


async def test_after_an_abort_the_loop_does_not_start_again(
    spawn: Any, server: ScriptedServer, extensions: Path
) -> None:
    write_extension(extensions, "loop", SETTLE_LOOP)
    gate = Gate()
    server.push(text_reply("first"), text_reply("held", gate=gate), text_reply("never"))
    ink = await spawn()
    await ink.command("prompt", message="go")
    await wait_gate(gate)  # the extension's first follow-up run is streaming
    aborted = await ink.command("abort")
    assert aborted["stop_reason"] == "aborted"
    stopped = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert stopped["error"].startswith("stopped: the user aborted the run")
    state = await still_running(ink)
    assert state["busy"] is False
    # The user's run and the extension's aborted one; "never" was never asked for.
    assert runs_after(ink, 0) == 2
    assert len(server.requests) == 2


STORM = """
def setup(ink):
    ink.on("notice", lambda event: ink.notify("again"))
    ink.register_command("/storm", lambda argument: ink.notify("start"))
"""


async def test_a_notice_storm_is_bounded(spawn: Any, extensions: Path) -> None:
    write_extension(extensions, "storm", STORM)
    ink = await spawn()
    await ink.command("prompt", message="/storm")
    stopped = await ink.wait_for(lambda e: e["type"] == "extension_error")
    assert stopped["error"].startswith(f"stopped: more than {MAX_CALLS_PER_SECOND} notices")

    def storm_notices() -> int:
        return sum(1 for e in ink.seen if e["type"] == "notice" and e["kind"] == "extension")

    count = storm_notices()
    assert count <= MAX_CALLS_PER_SECOND
    # Stopped means stopped: after a round trip (every event before it written), no more.
    await still_running(ink)
    await still_running(ink)
    assert storm_notices() == count
    assert len(errors(ink)) == 1
