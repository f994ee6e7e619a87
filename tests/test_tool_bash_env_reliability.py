"""Commands never see the API keys: not the well-known variables, not a provider's
`api_key_env`, unless `[tools] pass_env` names them; `!` lines included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ink_tui.assemble import assemble_controller
from ink_tui.session.config import load_config
from ink_tui.tools.bash import BashTool
from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.tool_fixtures import make_ctx

PRINT_KEYS = 'echo "[$INK_API_KEY][$OPENAI_API_KEY][$ANTHROPIC_API_KEY][$MY_KEY][$VISIBLE]"'
KEYS = {
    "INK_API_KEY": "sk-ink",
    "OPENAI_API_KEY": "sk-openai",
    "ANTHROPIC_API_KEY": "sk-anthropic",
    "MY_KEY": "sk-mine",
    "VISIBLE": "plain",
}


@pytest.fixture
def keys_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)


async def test_well_known_keys_are_dropped(tmp_path: Path, keys_set: None) -> None:
    result = await BashTool().execute({"command": PRINT_KEYS}, make_ctx(tmp_path))
    assert result.content.splitlines()[0] == "[][][][sk-mine][plain]"


async def test_configured_key_variables_are_dropped_unless_passed(
    tmp_path: Path, keys_set: None
) -> None:
    hidden = BashTool(hide_env=["MY_KEY"])
    result = await hidden.execute({"command": PRINT_KEYS}, make_ctx(tmp_path))
    assert result.content.splitlines()[0] == "[][][][][plain]"
    passed = BashTool(hide_env=["MY_KEY"], pass_env=["MY_KEY", "OPENAI_API_KEY"])
    result = await passed.execute({"command": PRINT_KEYS}, make_ctx(tmp_path))
    assert result.content.splitlines()[0] == "[][sk-openai][][sk-mine][plain]"


async def test_shell_lines_run_without_the_keys_too(
    workspace: Path, tmp_path: Path, keys_set: None
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        '[providers.mine]\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "MY_KEY"\n'
    )
    config = load_config(
        workspace, user_config_path=config_file, workspace_config_path=tmp_path / "none.toml"
    )
    assert config.problems == []
    controller = assemble_controller(
        config.model_config(), workspace, settings=config.run_settings()
    )
    ends = []
    controller.bus.subscribe(lambda event: ends.append(event) if event.type == "tool_end" else None)
    controller.submit("!" + PRINT_KEYS)
    await controller.wait_idle()
    await controller.aclose()
    assert ends[0].result.content.splitlines()[0] == "[][][][][plain]"


def run_print(server: ScriptedServer, workspace: Path, home: Path, config: str) -> None:
    (home / "config" / "ink").mkdir(parents=True)
    (home / "config" / "ink" / "config.toml").write_text(config)
    server.push(tool_reply([("bash", {"command": PRINT_KEYS})]), text_reply("Done."))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(KEYS)
    env.update(
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CONFIG_HOME=str(home / "config"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "ink_tui", "-p", "show", "--no-session", "--approval", "auto"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def provider_config(server: ScriptedServer, tools: str = "") -> str:
    # `tools` (a [tools] table) goes between the top-level keys and [providers.mine].
    return (
        'default_model = "mine/m"\n'
        f"{tools}"
        f'[providers.mine]\nbase_url = "{server.base_url}"\napi_key_env = "MY_KEY"\n'
        'models = ["m"]\n'
    )


def test_print_mode_commands_cannot_print_the_keys(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    run_print(server, workspace, tmp_path, provider_config(server))
    # The key still reaches the server it is for; the command saw none of them.
    assert server.request_headers[0]["Authorization"] == "Bearer sk-mine"
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["content"].splitlines()[0] == "[][][][][plain]"


def test_pass_env_gives_commands_the_named_keys(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    config = provider_config(server, '[tools]\npass_env = ["MY_KEY", "INK_API_KEY"]\n')
    run_print(server, workspace, tmp_path, config)
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["content"].splitlines()[0] == "[sk-ink][][][sk-mine][plain]"
