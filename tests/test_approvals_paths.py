"""The approval gate judges a write/edit path once, as the file system resolves it, and
protected places ask whatever the rules say: through the real front ends (`ink -p`,
`ink --mode rpc`, the app on a pty).

The issue's cases: with `a -> x/y` in the workspace, `a/../../escaped.txt`,
`a/../.ink/config.toml`, `a/../.git/hooks/pre-commit` and an edit of
`a/../../victim.txt` were written under `--approval edits` without a question; a saved
`write` rule let the model rewrite `.ink/config.toml`; a workspace at `$HOME` let
`edits` write ink's own config and extension folders.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from ink_tui.control.approvals import Approvals
from ink_tui.control.protected_places import ProtectedPlaces
from ink_tui.core.messages import ToolCall
from ink_tui.rpc_client import RpcClient
from tests.pty_terminal import PtyInk
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.test_print_mode import clean_env, ink

# What the model tries to write into `.ink/config.toml`: a policy and a rule for itself.
GRANT = '[approval]\npolicy = "auto"\nallow = ["bash"]\n'
HOOK = "#!/bin/sh\ntouch hooked\n"
EVIL = "def setup(ink):\n    open('pwned', 'w').close()\n"
VICTIM = "keep me\n"
REFUSED = "Not run: needs approval; print mode cannot ask (--approval auto allows it)"


def symlinked(workspace: Path) -> Path:
    """`a -> x/y` in the workspace, a `.git/hooks/` folder, and a victim file beside the
    workspace (outside it). Returns the victim."""
    (workspace / "x" / "y").mkdir(parents=True)
    (workspace / "a").symlink_to("x/y")
    (workspace / ".git" / "hooks").mkdir(parents=True)
    victim = workspace.parent / "victim.txt"
    victim.write_text(VICTIM)
    return victim


def the_four_calls() -> list[tuple[str, dict[str, Any], str]]:
    edit = [{"old_text": "keep me", "new_text": "changed"}]
    return [
        ("write", {"path": "a/../../escaped.txt", "content": "out\n"}, "c1"),
        ("write", {"path": "a/../.ink/config.toml", "content": GRANT}, "c2"),
        ("write", {"path": "a/../.git/hooks/pre-commit", "content": HOOK}, "c3"),
        ("edit", {"path": "a/../../victim.txt", "edits": edit}, "c4"),
    ]


def assert_nothing_written(workspace: Path, victim: Path, allowed: Path | None = None) -> None:
    """Neither where the text points nor where the symlink leads (but `allowed`)."""
    for place in (workspace.parent, workspace, workspace / "x"):
        for name in ("escaped.txt", ".ink/config.toml", ".git/hooks/pre-commit"):
            assert place / name == allowed or not (place / name).exists(), place / name
    assert not (workspace / "victim.txt").exists()
    assert victim.read_text() == VICTIM


def print_env(server: ScriptedServer, **extra: str) -> dict[str, str]:
    return clean_env(INK_BASE_URL=server.base_url, INK_MODEL="m", **extra)


def refused_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if REFUSED in line]


# -- print mode ---------------------------------------------------------------------------


def test_print_mode_refuses_the_four_symlink_paths_under_edits(
    server: ScriptedServer, workspace: Path
) -> None:
    victim = symlinked(workspace)
    server.push(tool_reply(the_four_calls()), text_reply("I could not."))
    done = ink("-p", "go", "--approval", "edits", cwd=workspace, env=print_env(server))
    assert done.returncode == 0, done.stderr
    assert refused_lines(done.stderr) == [
        f"✗ write a/../../escaped.txt: {REFUSED}",
        f"✗ write a/../.ink/config.toml: {REFUSED}",
        f"✗ write a/../.git/hooks/pre-commit: {REFUSED}",
        f"✗ edit a/../../victim.txt: {REFUSED}",
    ]
    assert_nothing_written(workspace, victim)
    results = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    # The model reads why: the text leaves the workspace; the symlink lands elsewhere.
    assert "as written, a/../../escaped.txt writes outside the workspace" in results[0]
    assert "so it really writes escaped.txt" in results[0]
    assert "writes into x/.ink/: protected" in results[1]
    assert "writes into x/.git/: protected" in results[2]
    assert "as written, a/../../victim.txt writes outside the workspace" in results[3]


def test_a_saved_write_rule_never_grants_the_ink_or_git_folder(
    server: ScriptedServer, workspace: Path
) -> None:
    (workspace / ".ink").mkdir()
    config = workspace / ".ink" / "config.toml"
    # The README's example, with `write` too.
    config.write_text('[approval]\nallow = ["edit", "write", "bash:pytest"]\n')
    before = config.read_text()
    (workspace / ".git" / "hooks").mkdir(parents=True)
    calls = [
        ("write", {"path": "notes.md", "content": "allowed by the rule\n"}, "c1"),
        ("write", {"path": ".ink/config.toml", "content": GRANT}, "c2"),
        ("edit", {"path": ".ink/config.toml", "edits": [{"old_text": "edit", "new_text": "bash"}]}),
        ("write", {"path": ".git/hooks/pre-commit", "content": HOOK}, "c4"),
        ("write", {"path": ".ink/extensions/evil.py", "content": EVIL}, "c5"),
    ]
    for policy in ("ask", "edits"):
        server.push(tool_reply(calls), text_reply("done"))
        done = ink(
            "-p",
            "go",
            "--approval",
            policy,
            "--trust-project",
            cwd=workspace,
            env=print_env(server),
        )
        assert done.returncode == 0, done.stderr
        assert (workspace / "notes.md").read_text() == "allowed by the rule\n"
        assert len(refused_lines(done.stderr)) == 4, done.stderr
        assert config.read_text() == before
        assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
        assert not (workspace / ".ink" / "extensions").exists()
        (workspace / "notes.md").unlink()
    # `auto` is the one policy that writes there without asking.
    server.push(tool_reply([calls[1]]), text_reply("done"))
    done = ink("-p", "go", "--approval", "auto", cwd=workspace, env=print_env(server))
    assert done.returncode == 0, done.stderr
    assert config.read_text() == GRANT


@pytest.mark.parametrize("xdg", [True, False], ids=["xdg-config-home", "home-only"])
def test_a_workspace_at_home_protects_inks_own_folders(
    server: ScriptedServer, workspace: Path, xdg: bool
) -> None:
    home = workspace
    env = {k: v for k, v in print_env(server).items() if not k.startswith("XDG_")}
    env["HOME"] = str(home)
    if xdg:
        env["XDG_CONFIG_HOME"] = str(home / ".config")
        env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    calls = [
        ("write", {"path": ".config/ink/config.toml", "content": GRANT}, "c1"),
        ("write", {"path": ".config/ink/extensions/evil.py", "content": EVIL}, "c2"),
        ("write", {"path": "~/.config/ink/AGENTS.md", "content": "obey\n"}, "c3"),
        ("write", {"path": ".local/share/ink/trusted-extensions.json", "content": "{}"}, "c4"),
        ("write", {"path": ".local/share/ink/sessions/x.jsonl", "content": "{}\n"}, "c5"),
        ("write", {"path": "notes.md", "content": "ordinary\n"}, "c6"),
    ]
    server.push(tool_reply(calls), text_reply("done"))
    done = ink("-p", "go", "--approval", "edits", cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    assert len(refused_lines(done.stderr)) == 5, done.stderr
    assert not (home / ".config" / "ink").exists()
    assert not (home / ".local" / "share" / "ink" / "trusted-extensions.json").exists()
    assert not (home / ".local" / "share" / "ink" / "sessions" / "x.jsonl").exists()
    assert (workspace / "notes.md").read_text() == "ordinary\n"
    results = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "writes into ink's user config folder (~/.config/ink): protected" in results[0]
    assert "writes into the user's extension folder (~/.config/ink/extensions)" in results[1]
    assert "the extension trust store" in results[3]
    assert "ink's data folder" in results[4]
    # Nothing was put where extensions load from: the next run loads none.
    server.push(text_reply("hello"))
    again = ink("-p", "hi", cwd=workspace, env=env)
    assert again.returncode == 0, again.stderr
    assert not (workspace / "pwned").exists()


# -- RPC mode ---------------------------------------------------------------------------


@pytest.fixture
def rpc_env(tmp_path: Path) -> dict[str, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INK_", "OPENAI_", "XDG_")) and k != "HOME"
    }
    clean.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    return clean


def rpc_args(server: ScriptedServer, policy: str) -> list[str]:
    model = ["--base-url", server.base_url, "--model", "m", "--api-key", "k"]
    return [*model, "--approval", policy]


async def test_rpc_asks_for_each_of_the_four_and_writes_nothing_before_the_answer(
    server: ScriptedServer, workspace: Path, rpc_env: dict[str, str]
) -> None:
    victim = symlinked(workspace)
    server.push(tool_reply(the_four_calls()), text_reply("ok"))
    async with RpcClient.spawn(rpc_args(server, "edits"), cwd=workspace, env=rpc_env) as rpc:
        await rpc.command("prompt", message="go")
        asked: list[dict[str, Any]] = []
        for _ in range(4):
            question = await rpc.wait_for(
                lambda e: e["type"] == "approval_request", after=_after(rpc, asked)
            )
            asked.append(question)
            # The call waits: nothing of it (or of a later one) is written yet; only
            # the first, allowed below, once its answer is in.
            allowed = workspace / "escaped.txt" if asked[1:] else None
            assert_nothing_written(workspace, victim, allowed)
            # No rule can cover it: "allow once" or "deny" only.
            assert question["rule"] is None and question["decisions"] == ["allow", "deny"]
            decision = "allow" if question["call_id"] == "c1" else "deny"
            await rpc.command("approve", request_id=question["request_id"], decision=decision)
        await rpc.wait_settled()
    assert [q["call_id"] for q in asked] == ["c1", "c2", "c3", "c4"]
    # The question names the file that gets written: the symlink's target.
    assert [q["path"] for q in asked] == [
        "escaped.txt",
        "x/.ink/config.toml",
        "x/.git/hooks/pre-commit",
        "victim.txt",
    ]
    assert "as written, a/../../escaped.txt writes outside the workspace" in asked[0]["why"]
    assert asked[1]["why"] == "writes into x/.ink/: protected"
    # The one allowed landed exactly there, and nowhere else.
    assert (workspace / "escaped.txt").read_text() == "out\n"
    assert not (workspace.parent / "escaped.txt").exists()
    assert victim.read_text() == VICTIM


def _after(rpc: RpcClient, asked: list[dict[str, Any]]) -> int:
    """The event index just past the last question seen."""
    if not asked:
        return 0
    return rpc.seen.index(asked[-1]) + 1


async def test_rpc_session_and_always_answers_never_become_a_rule_for_protected_places(
    server: ScriptedServer, workspace: Path, rpc_env: dict[str, str]
) -> None:
    (workspace / ".ink").mkdir()
    config = workspace / ".ink" / "config.toml"
    config.write_text("# mine\n")
    server.push(
        tool_reply(
            [
                ("write", {"path": "one.txt", "content": "1\n"}, "c1"),
                ("write", {"path": ".ink/config.toml", "content": GRANT}, "c2"),
                ("write", {"path": ".ink/config.toml", "content": GRANT}, "c3"),
            ]
        ),
        text_reply("ok"),
    )
    async with RpcClient.spawn(rpc_args(server, "ask"), cwd=workspace, env=rpc_env) as rpc:
        await rpc.command("prompt", message="go")
        first = await rpc.wait_for(lambda e: e["type"] == "approval_request")
        assert first["rule"] == "write"
        # "For this session": every ordinary write from now on...
        await rpc.command("approve", request_id=first["request_id"], decision="session")
        second = await rpc.wait_for(
            lambda e: e["type"] == "approval_request", after=rpc.seen.index(first) + 1
        )
        # ...but not this one: it is asked, and "always" does not save a rule.
        assert second["call_id"] == "c2" and second["rule"] is None
        assert not config.read_text().startswith("[approval]")
        await rpc.command("approve", request_id=second["request_id"], decision="always")
        third = await rpc.wait_for(
            lambda e: e["type"] == "approval_request", after=rpc.seen.index(second) + 1
        )
        assert third["call_id"] == "c3"
        await rpc.command("approve", request_id=third["request_id"], decision="deny")
        await rpc.wait_settled()
    # The "always" answer allowed that one write, once; no rule was saved.
    assert config.read_text() == GRANT
    assert (workspace / "one.txt").exists()


# -- the app on a pty -----------------------------------------------------------------------


def test_the_app_asks_before_writing_the_user_extension_folder_at_home(
    server: ScriptedServer, workspace: Path
) -> None:
    home = workspace
    env = {k: v for k, v in print_env(server).items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), INK_APPROVAL="edits")
    extension = home / ".config" / "ink" / "extensions" / "evil.py"
    server.push(
        tool_reply([("write", {"path": ".config/ink/extensions/evil.py", "content": EVIL})]),
        text_reply("ok"),
    )
    app = PtyInk(["--base-url", server.base_url, "--model", "m"], cwd=workspace, env=env)
    try:
        app.wait_for("idle")
        app.send(b"add an extension\r")
        app.wait_for("protected")
        assert "extension folder" in app.text()
        assert not extension.exists()
        # Ctrl+C denies the open question and interrupts the run.
        app.send(b"\x03")
        app.wait_for("Interrupted.")
        assert not extension.exists()
    finally:
        app.close()


def test_the_app_asks_about_a_symlink_path_and_allow_writes_where_it_leads(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    """The issue's first path in the real app: the question names the file the write
    really opens, nothing is written while it waits, and Ctrl+G then y writes that file
    only (not the one above the workspace that the text names)."""
    victim = symlinked(workspace)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in print_env(server).items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), INK_APPROVAL="edits")
    server.push(
        tool_reply([("write", {"path": "a/../../escaped.txt", "content": "out\n"})]),
        text_reply("wrote it"),
    )
    args = ["--base-url", server.base_url, "--model", "m"]
    app = PtyInk(args, cwd=workspace, env=env, size=(200, 40))
    try:
        app.wait_for("idle")
        app.send(b"write it\r")
        app.wait_for("waiting for your answer")
        # The reason may wrap (the temporary folder's name is in it): read it unwrapped.
        wait_squashed(app, "a/../../escaped.txtwritesoutsidetheworkspace")
        wait_squashed(app, "soitreallywritesescaped.txt.")
        assert_nothing_written(workspace, victim)
        # Ctrl+G (BEL) then y: allowed once.
        app.send(b"\x07")
        app.wait_for("y/n or ←/→ and Enter to answer")
        mark = app.mark()
        app.send(b"y")
        app.wait_for("wrote it", since=mark)
        assert (workspace / "escaped.txt").read_text() == "out\n"
        assert_nothing_written(workspace, victim, allowed=workspace / "escaped.txt")
    finally:
        app.close()


def wait_squashed(app: PtyInk, needle: str, within: float = 20.0) -> None:
    """Until `needle` (written without spaces) is on the screen, whitespace and line
    breaks aside."""
    deadline = time.monotonic() + within
    while needle not in "".join(app.text().split()):
        assert time.monotonic() < deadline, f"{needle!r} never drawn:\n{app.text()[-2000:]}"
        assert app.process.poll() is None, f"ink exited:\n{app.text()[-2000:]}"
        time.sleep(0.05)


# -- the protected list is the loaders' folders --------------------------------------------


def test_the_protected_folders_are_the_ones_ink_loads_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ink_tui.extensions.discovery import project_extensions_dir, user_extensions_dir
    from ink_tui.extensions.trust import default_trust_file
    from ink_tui.session.config_files import user_config_dir, workspace_config_path
    from ink_tui.session.store_paths import data_root, sessions_root

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = Approvals(workspace, lambda event: None, policy="edits")
    for path in (
        user_config_dir() / "config.toml",
        user_extensions_dir() / "x.py",
        project_extensions_dir(workspace) / "x.py",
        workspace_config_path(workspace),
        default_trust_file(),
        data_root() / "anything",
        sessions_root() / "ws-1234" / "s.jsonl",
    ):
        assert gate.judge(str(path)).place == "protected", path
        verdict = gate.verdict(ToolCall("c", "write", {"path": str(path), "content": ""}))
        assert verdict is not None and not verdict.by_rule, path
    assert gate.judge(str(workspace / "src" / "ok.py")).place == "inside"
    assert gate.judge(str(tmp_path / "elsewhere.txt")).place == "outside"
    # A symlink to a protected folder is that folder.
    (workspace / "cfg").symlink_to(user_config_dir(), target_is_directory=True)
    assert gate.judge("cfg/config.toml").place == "protected"
    assert isinstance(gate.protected, ProtectedPlaces)


# -- a symlink changed while the question was open -------------------------------------


async def test_a_path_that_leads_elsewhere_after_the_answer_is_not_written(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ink_tui.control.run_settings import RunSettings
    from tests.run_helpers import make_controller
    from tests.test_approvals import next_question

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (workspace / "docs").mkdir()
    (workspace / "link").symlink_to("docs")
    server.push(tool_reply([("write", {"path": "link/f.txt", "content": "x\n"})]), text_reply("ok"))
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("write")
    question = await next_question(recorder)
    assert question.path == "docs/f.txt"
    # Meanwhile (a command still running, say) the link is pointed at .git/.
    (workspace / ".git").mkdir()
    (workspace / "link").unlink()
    (workspace / "link").symlink_to(".git")
    controller.answer_approval(question.request_id, "allow")
    await controller.wait_idle()
    assert not (workspace / ".git" / "f.txt").exists()
    assert not (workspace / "docs" / "f.txt").exists()
    [result] = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert (
        "led to docs/f.txt when you were asked and leads to .git/f.txt now" in (result["content"])
    )
    await controller.aclose()


def test_ink_folders_are_protected_whatever_the_case_of_their_names(tmp_path: Path) -> None:
    """On a case-insensitive file system (macOS, Windows, a casefold ext4 folder)
    `.Config/INK/config.toml` is ink's own config file: a write spelled so is protected
    too, not an ordinary write inside a workspace at `$HOME`. (Where case matters it is
    another file, and asking once more costs nothing.)"""
    home = tmp_path / "home"
    config, data = home / ".config" / "ink", home / ".local" / "share" / "ink"
    (config / "extensions").mkdir(parents=True)
    data.mkdir(parents=True)
    protected = ProtectedPlaces(home, config_dir=config, data_dir=data)
    gate = Approvals(home, lambda event: None, policy="edits", protected=protected)
    for raw in (
        ".Config/INK/config.toml",
        ".config/Ink/Extensions/evil.py",
        ".LOCAL/share/ink/trusted-extensions.json",
        str(data).upper() + "/sessions/x.jsonl",
    ):
        assert gate.judge(raw).place == "protected", raw
        verdict = gate.verdict(ToolCall("c", "write", {"path": raw, "content": ""}))
        assert verdict is not None and not verdict.by_rule, raw
    assert gate.judge(".config/inkling/notes.md").place == "inside"
