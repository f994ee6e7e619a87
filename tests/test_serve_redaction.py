"""What leaves `ink serve`: tool arguments reduced (bash commands only with
--show-tool-arguments) and secrets masked in every event, answer and error: the
configured API key, values of env vars named like *_TOKEN, Authorization values."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedServer, error_reply, text_reply, tool_reply
from tests.serve_helpers import read_sse, serve, settled

ENV_SECRET = "supersecret123"
API_KEY = "sk-configured-abcdef123456"
COMMAND = f"echo {ENV_SECRET}; echo {API_KEY}"


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FOO_TOKEN", ENV_SECRET)
    yield home


def script(server: ScriptedServer) -> None:
    server.push(
        tool_reply(
            [("bash", {"command": COMMAND}), ("read", {"path": "README.md"})],
            text=f"Using {ENV_SECRET} as told.",
        ),
        error_reply(
            400,
            f"invalid key {API_KEY}; Authorization: Bearer {API_KEY}; FOO_TOKEN={ENV_SECRET}",
        ),
    )


async def everything_sent(srv: object, sid: str) -> tuple[str, list[dict]]:
    """Every byte a client could get about the session, and the streamed events."""
    from tests.serve_helpers import Served

    assert isinstance(srv, Served)
    raw: list[str] = []
    async with srv.client.stream(
        "POST",
        f"/api/sessions/{sid}/messages?wait=settled",
        json={"text": f"deploy with {ENV_SECRET}"},
    ) as stream:
        events = await read_sse(stream, settled, raw=raw)
    async with srv.client.stream(
        "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
    ) as stream:
        await read_sse(stream, settled, raw=raw)
    for path in (f"/api/sessions/{sid}", "/api/sessions", f"/api/sessions/{sid}/queue"):
        raw.append((await srv.client.get(path)).text)
    return "\n".join(raw), [e.data for e in events]


async def test_no_secret_and_no_command_leaves_the_server(
    server: ScriptedServer, workspace: Path
) -> None:
    script(server)
    async with serve(server, workspace, api_key=API_KEY) as srv:
        sid = await srv.new_session()
        sent, events = await everything_sent(srv, sid)

    # The secrets did travel where they had to: the command ran, the model saw it all.
    assert ENV_SECRET in str(server.requests[1]) and API_KEY in str(server.requests[1])
    assert ENV_SECRET not in sent and API_KEY not in sent
    assert "echo" not in sent  # the bash command, in no argument and no summary
    starts = {e["tool_name"]: e for e in events if e["type"] == "tool_execution_start"}
    assert starts["bash"]["arguments"] == {}
    assert starts["read"]["arguments"] == {"path": "README.md"}
    ends = {e["tool_name"]: e for e in events if e["type"] == "tool_execution_end"}
    assert ends["bash"]["content"].count("***") == 2
    errors = [e for e in events if e["type"] == "error"]
    assert errors and "invalid key ***" in errors[0]["message"]
    assert "Bearer ***" in errors[0]["message"]
    settle = events[-1]
    assert settle["type"] == "agent_settled" and settle["stop_reason"] == "failed"
    assert "***" in settle["error"]


async def test_show_tool_arguments_sends_commands_with_secrets_still_masked(
    server: ScriptedServer, workspace: Path
) -> None:
    script(server)
    async with serve(server, workspace, api_key=API_KEY, show_arguments=True) as srv:
        sid = await srv.new_session()
        sent, events = await everything_sent(srv, sid)

    assert ENV_SECRET not in sent and API_KEY not in sent
    start = next(e for e in events if e["type"] == "tool_execution_start")
    assert start["arguments"] == {"command": "echo ***; echo ***"}
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert "echo ***" in end["summary"]


def test_the_redactor_masks_each_kind_of_secret() -> None:
    from ink_tui.serve.redact import Redactor, env_secrets

    env = {
        "DB_PASSWORD": "s3cr3t-value",
        "PGPASSWORD": "pg-pass-1",
        "SMTP_PASS": "mailpass",
        "GOOGLE_CREDENTIALS": "creds-json-blob",
        "GH_TOKEN": "ghp_abcdef",
        "AWS_SECRET": "aws-s3cret",
        "SHORT_KEY": "1",
        "FLAG_TOKEN": "true",
        "COMPASS": "not-a-secret-name",
        "HOME": "/home/me",
    }
    redactor = Redactor(["sk-configured-0123"], show_arguments=False)
    redactor.add_secrets(env_secrets(env))
    text = "\n".join(
        [
            *(f"{name}={value}" for name, value in env.items()),
            "curl -H 'Authorization: Bearer abc.def-123' https://x",
            "token=sk-configured-0123",
            "-----BEGIN RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEA",
            "-----END RSA PRIVATE KEY-----",
            "after the key",
            "+-----BEGIN PRIVATE KEY-----",
            "+MIIEvQIBADANBg (cut before its end)",
        ]
    )
    shown = redactor.text(text)
    for secret in ("s3cr3t-value", "pg-pass-1", "mailpass", "creds-json-blob", "ghp_abcdef"):
        assert secret not in shown
    for secret in ("aws-s3cret", "abc.def-123", "sk-configured-0123", "MIIEow", "MIIEvQ"):
        assert secret not in shown
    # Names that say nothing of a secret, and values too short or too common, stay.
    for kept in ("SHORT_KEY=1", "FLAG_TOKEN=true", "COMPASS=not-a-secret-name", "HOME=/home/me"):
        assert kept in shown
    assert "-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----" in shown
    assert "after the key" in shown
    assert shown.endswith("+-----BEGIN PRIVATE KEY-----***")
    assert "Authorization: Bearer ***" in shown


PASSWORD = "s3cr3t-value"


async def test_a_password_in_the_environment_never_reaches_a_client(
    server: ScriptedServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    server.push(tool_reply([("bash", {"command": "env"})]), text_reply("that is the env"))
    # With tool arguments and results sent whole: the output is, masked.
    async with serve(server, workspace, show_arguments=True) as srv:
        sid = await srv.new_session()
        raw: list[str] = []
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "show env"}
        ) as stream:
            events = await read_sse(stream, settled, raw=raw)
        async with srv.client.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
        ) as stream:
            await read_sse(stream, settled, raw=raw)
        for path in (f"/api/sessions/{sid}", "/api/sessions"):
            raw.append((await srv.client.get(path)).text)
    sent = "\n".join(raw)

    # The command ran and printed it: the model saw it, no client did.
    assert PASSWORD in str(server.requests[1])
    assert PASSWORD not in sent
    end = next(e.data for e in events if e.event == "tool_execution_end")
    assert "DB_PASSWORD=***" in end["content"]
