"""`ink -p` cannot ask: a call that would need asking is refused (the model is told why,
stderr says so in one line) unless `--approval auto` or a rule allows it."""

from __future__ import annotations

from pathlib import Path

from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.test_print_mode import clean_env, ink


def _env(server: ScriptedServer, **extra: str) -> dict[str, str]:
    return clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m", **extra)


def test_a_call_that_would_ask_is_refused_with_one_stderr_line(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("bash", {"command": "touch made"}), ("read", {"path": "README.md"})]),
        text_reply("I could not run it."),
    )
    done = ink("-p", "make a file", cwd=workspace, env=_env(server))
    assert done.returncode == 0, done.stderr
    assert not (workspace / "made").exists()
    lines = done.stderr.splitlines()
    refused = [line for line in lines if "bash touch made" in line]
    assert refused == [
        "✗ bash touch made: Not run: needs approval; print mode cannot ask (--approval auto "
        "allows it)"
    ]
    assert any(line.startswith("✓ read README.md") for line in lines)  # read-only: no ask
    tool = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert "needs the user's approval" in tool["content"]


def test_approval_auto_runs_it(server: ScriptedServer, workspace: Path) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    done = ink("-p", "make a file", "--approval", "auto", cwd=workspace, env=_env(server))
    assert done.returncode == 0, done.stderr
    assert (workspace / "made").exists()


def test_a_rule_in_a_trusted_workspace_config_allows_it(
    server: ScriptedServer, workspace: Path
) -> None:
    # Trusted for this run (tests/test_project_trust.py: an untrusted file's rules are not).
    (workspace / ".ink").mkdir()
    (workspace / ".ink" / "config.toml").write_text('[approval]\nallow = ["bash:touch"]\n')
    server.push(
        tool_reply([("bash", {"command": "touch made"}), ("bash", {"command": "rm sum.py"})]),
        text_reply("done"),
    )
    done = ink("-p", "go", "--trust-project", cwd=workspace, env=_env(server))
    assert done.returncode == 0, done.stderr
    assert (workspace / "made").exists()
    assert (workspace / "sum.py").exists()  # `rm` is not covered by the rule
    assert "✗ bash rm sum.py: Not run: needs approval" in done.stderr


def test_the_approval_flag_and_setting_say_edits_asks_for_protected_places() -> None:
    """`ink --help` and the setting's description say what docs/approvals.md says:
    `edits` asks for writes outside the workspace and into protected places."""
    from ink_tui.cli import build_parser
    from ink_tui.session.config_schema import SETTINGS_BY_NAME

    said = "only before bash and writes outside the workspace or into protected places (edits)"
    shown = " ".join(build_parser().format_help().split())
    assert said in shown
    assert said in SETTINGS_BY_NAME["approval.policy"].doc
    from ink_tui.serve.main import build_parser as build_serve_parser

    assert said in " ".join(build_serve_parser().format_help().split())
