"""Compaction through the real command: `[context_windows]` and `compact_at` from the
config file, and `ink -c` resuming with the compacted context."""

from __future__ import annotations

from pathlib import Path

from ink_tui.core.compaction_prompt import SUMMARY_HEADER, SUMMARY_SYSTEM_PROMPT
from ink_tui.session.catalog import list_sessions
from ink_tui.session.config import load_config
from ink_tui.session.entries import CompactionEntry
from ink_tui.session.session_reader import load_session
from tests.scripted_server import ScriptedServer
from tests.test_compaction import reply, roles_and_texts
from tests.test_print_continue import env_for, ink, store


def write_config(home: Path, text: str) -> None:
    folder = home / "config" / "ink"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def test_continue_after_a_compaction_sends_the_same_compacted_context(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path, server)  # model "m"
    write_config(tmp_path, "compact_at = 0.5\n\n[context_windows]\nm = 2000\n")
    server.push(reply("First answer.", prompt_tokens=1200))  # 1210 of 2000: past 0.5
    assert ink("-p", "first task", cwd=workspace, env=env).returncode == 0

    server.push(reply("## Goal\nthe tasks"), reply("Second answer."))
    second = ink("-c", "-p", "second task", cwd=workspace, env=env)
    assert second.returncode == 0, second.stderr
    # Print mode says so on stderr (stdout is the answer alone).
    assert "ink: compacting the conversation (~" in second.stderr
    assert "ink: compacted: ~" in second.stderr
    assert "compact" not in second.stdout
    assert server.requests[1]["messages"][0]["content"] == SUMMARY_SYSTEM_PROMPT
    compacted = roles_and_texts(server.requests[2])[1:]
    assert compacted == [
        ("user", f"{SUMMARY_HEADER}\n\n## Goal\nthe tasks"),
        ("user", "second task"),
    ]

    server.push(reply("Third answer."))
    third = ink("-c", "-p", "third task", cwd=workspace, env=env)
    assert third.returncode == 0, third.stderr
    assert len(server.requests) == 4  # no second compaction
    assert roles_and_texts(server.requests[3])[1:] == [
        *compacted,
        ("assistant", "Second answer."),
        ("user", "third task"),
    ]
    # One file holds everything, the compaction entry included.
    [session] = list_sessions(workspace, store(tmp_path))
    loaded = load_session(session.path)
    [entry] = [e for e in loaded.entries if isinstance(e, CompactionEntry)]
    assert (entry.first, entry.end) == (0, 2)
    assert loaded.message_count == 6


def test_context_window_settings_are_checked(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    user = tmp_path / "config.toml"
    user.write_text('compact_at = 1.5\n\n[context_windows]\nqwen3 = "big"\n"local/m" = 65536\n')
    config = load_config(tmp_path / "ws", user_config_path=user, environ={})
    problems = "\n".join(config.problems)
    assert "compact_at" in problems and "<= 1" in problems
    assert "context_windows.qwen3" in problems and "integer >= 1024" in problems
    assert config.value("compact_at") == 0.8
    assert config.context_window_for("local", "m") == 65536
    assert config.context_window_for("other", "m") is None
