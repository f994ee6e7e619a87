"""`ink -c -p` and `ink -r ID -p`: the prompt continues that session, in the same file.

The real command in a subprocess against the loopback server, with the data folder in a
temporary home: what the model receives is read from the server's recorded requests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ink_tui.session.catalog import list_sessions
from ink_tui.session.session_reader import load_session
from tests.scripted_server import ScriptedServer, text_reply, tool_reply


def env_for(home: Path, server: ScriptedServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
        INK_BASE_URL=server.base_url,
        INK_MODEL="m",
    )
    return env


def ink(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ink_tui", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def store(home: Path) -> Path:
    return home / "data" / "ink"


def without_system(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] != "system"]


def test_continue_sends_the_sessions_history_and_appends_to_its_file(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path, server)
    server.push(tool_reply([("read", {"path": "README.md"})]), text_reply("A tiny project."))
    first = ink("-p", "what is this?", cwd=workspace, env=env)
    assert first.returncode == 0, first.stderr
    [session] = list_sessions(workspace, store(tmp_path))

    server.push(text_reply("Still tiny."))
    second = ink("-c", "-p", "and now?", cwd=workspace, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Still tiny.\n"
    # The model got the whole earlier conversation (tool call and result included), then
    # the new prompt: the same request the app would have sent after `ink -c`.
    earlier = without_system(server.requests[1])
    assert without_system(server.requests[2]) == [
        *earlier,
        {"role": "assistant", "content": "A tiny project."},
        {"role": "user", "content": "and now?"},
    ]
    # One session, one file: the next `ink -c` finds the whole thing.
    [after] = list_sessions(workspace, store(tmp_path))
    assert after.path == session.path
    history = load_session(session.path).history
    assert [getattr(m, "content", None) for m in history if m.role == "user"] == [
        "what is this?",
        "and now?",
    ]
    assert history[-1].text == "Still tiny."  # type: ignore[union-attr]


def test_resume_by_id_continues_that_session_not_the_newest(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path, server)
    server.push(text_reply("older answer"), text_reply("newer answer"), text_reply("again"))
    assert ink("-p", "older prompt", cwd=workspace, env=env).returncode == 0
    assert ink("-p", "newer prompt", cwd=workspace, env=env).returncode == 0
    newer, older = list_sessions(workspace, store(tmp_path))
    assert older.first_prompt == "older prompt"

    done = ink("-r", older.id[:6], "-p", "follow up", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    assert without_system(server.requests[2]) == [
        {"role": "user", "content": "older prompt"},
        {"role": "assistant", "content": "older answer"},
        {"role": "user", "content": "follow up"},
    ]
    assert load_session(older.path).history[-1].text == "again"  # type: ignore[union-attr]
    assert load_session(newer.path).message_count == 2


def test_resume_without_an_id_is_a_clear_error_in_print_mode(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    done = ink("-r", "-p", "hello", cwd=workspace, env=env_for(tmp_path, server))
    assert done.returncode == 2
    assert "-r needs a session id in print mode" in done.stderr
    assert server.requests == []


def test_resume_with_an_unknown_id_is_exit_2(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    done = ink("-r", "abcdef", "-p", "hello", cwd=workspace, env=env_for(tmp_path, server))
    assert done.returncode == 2
    assert "no session id starts with 'abcdef'" in done.stderr
    assert server.requests == []


def test_continue_with_nothing_to_continue_says_so_and_starts_one(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    server.push(text_reply("fresh"))
    done = ink("-c", "-p", "hello", cwd=workspace, env=env_for(tmp_path, server))
    assert done.returncode == 0, done.stderr
    assert "No earlier session in this workspace" in done.stderr
    [session] = list_sessions(workspace, store(tmp_path))
    assert session.first_prompt == "hello"


def test_continue_with_no_session_reads_the_history_and_writes_nothing(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path, server)
    server.push(text_reply("first answer"), text_reply("second answer"))
    assert ink("-p", "first", cwd=workspace, env=env).returncode == 0
    [session] = list_sessions(workspace, store(tmp_path))
    before = session.path.read_bytes()
    done = ink("-c", "--no-session", "-p", "second", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    assert [m["content"] for m in without_system(server.requests[1])] == [
        "first",
        "first answer",
        "second",
    ]
    assert session.path.read_bytes() == before
