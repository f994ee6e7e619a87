"""Project extensions and trust, from the outside: `ink -p` and `ink --mode rpc` as real
processes. An untrusted folder's extensions are skipped (and stderr says so); once the
folder is trusted they load; a changed file makes it untrusted again; the user's own
extensions always load; `--trust-extensions` loads without storing anything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ink_tui.extensions.trust import TrustStore
from tests.extension_helpers import marked, user_messages, write_extension
from tests.rpc_process import isolated_env, run_rpc
from tests.scripted_server import ScriptedServer, text_reply

RULE = """
def setup(ink):
    ink.send_message("{text}", custom_type="constraint", deliver_as="next_turn")
    ink.register_command("/{name}", lambda argument: None, "a command of {name}")
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


def trust_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"]) / "ink" / "trusted-extensions.json"


def project_dir(workspace: Path) -> Path:
    return workspace / ".ink" / "extensions"


def ink_print(
    server: ScriptedServer, workspace: Path, env: dict[str, str], *flags: str
) -> subprocess.CompletedProcess[str]:
    server.push(text_reply("done"))
    args = ["--base-url", server.base_url, "--model", "m", "--no-session", *flags]
    return subprocess.run(
        [sys.executable, "-m", "ink_tui", *args, "-p", "go"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def last_users(server: ScriptedServer) -> list[str]:
    return user_messages(server.requests[-1])


def rule(name: str) -> str:
    return RULE.format(text=f"{name} rule", name=name)


def test_an_untrusted_project_extension_is_skipped_in_print_mode_and_loads_once_trusted(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    write_extension(project_dir(workspace), "house", rule("house"))
    write_extension(Path(env["XDG_CONFIG_HOME"]) / "ink" / "extensions", "mine", rule("mine"))

    skipped = ink_print(server, workspace, env)
    assert skipped.returncode == 0, skipped.stderr
    assert last_users(server) == [marked("mine", "constraint", "mine rule"), "go"]
    assert "skipped 1 project extension in" in skipped.stderr
    assert "(house.py): that folder is not trusted" in skipped.stderr
    assert "--trust-extensions" in skipped.stderr

    TrustStore(trust_file(env)).trust(project_dir(workspace))
    trusted = ink_print(server, workspace, env)
    assert trusted.returncode == 0, trusted.stderr
    assert last_users(server) == [
        marked("mine", "constraint", "mine rule"),
        marked("house", "constraint", "house rule"),
        "go",
    ]
    assert "skipped" not in trusted.stderr

    # A changed file: the folder is not trusted any more until the user says so again.
    (project_dir(workspace) / "house.py").write_text(rule("house").replace("house rule", "new"))
    changed = ink_print(server, workspace, env)
    assert last_users(server) == [marked("mine", "constraint", "mine rule"), "go"]
    assert "skipped 1 project extension" in changed.stderr


def test_a_new_file_in_a_trusted_folder_asks_again(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    write_extension(project_dir(workspace), "house", rule("house"))
    TrustStore(trust_file(env)).trust(project_dir(workspace))
    write_extension(project_dir(workspace), "sneaky", rule("sneaky"))
    done = ink_print(server, workspace, env)
    assert last_users(server) == ["go"]
    assert "skipped 2 project extensions" in done.stderr


def test_trust_extensions_flag_loads_them_for_this_run_only(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    write_extension(project_dir(workspace), "house", rule("house"))
    done = ink_print(server, workspace, env, "--trust-extensions")
    assert done.returncode == 0, done.stderr
    assert last_users(server) == [marked("house", "constraint", "house rule"), "go"]
    assert not trust_file(env).exists()


def test_no_extensions_loads_none(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    write_extension(Path(env["XDG_CONFIG_HOME"]) / "ink" / "extensions", "mine", rule("mine"))
    done = ink_print(server, workspace, env, "--no-extensions")
    assert done.returncode == 0, done.stderr
    assert last_users(server) == ["go"]


def test_a_broken_extension_is_named_on_stderr_and_the_prompt_still_runs(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    folder = Path(env["XDG_CONFIG_HOME"]) / "ink" / "extensions"
    write_extension(folder, "broken", "import no_such_module_here\n")
    done = ink_print(server, workspace, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    assert "broken.py was not loaded: ModuleNotFoundError" in done.stderr


def test_rpc_mode_skips_untrusted_project_extensions_and_lists_loaded_commands(
    server: ScriptedServer, workspace: Path, env: dict[str, str]
) -> None:
    write_extension(project_dir(workspace), "house", rule("house"))
    write_extension(Path(env["XDG_CONFIG_HOME"]) / "ink" / "extensions", "mine", rule("mine"))
    command = '{"type": "get_commands", "id": "1"}\n'
    done = run_rpc(["--base-url", server.base_url], workspace, env, command)
    assert done.returncode == 0, done.stderr
    [response] = [json.loads(line) for line in done.stdout.splitlines()]
    slash = [c for c in response["data"]["commands"] if c.get("source") == "extension"]
    assert slash == [
        {
            "name": "/mine",
            "description": "a command of mine",
            "extension": "mine",
            "source": "extension",
        }
    ]
    assert "skipped 1 project extension" in done.stderr and "(house.py)" in done.stderr
