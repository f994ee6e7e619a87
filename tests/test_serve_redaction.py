"""What leaves `ink serve`: tool arguments reduced (bash commands only with
--show-tool-arguments) and secrets masked in every event, answer and error: the
configured API key, values of env vars named like *_TOKEN, Authorization values."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scripted_server import ScriptedServer, error_reply, text_reply, tool_reply
from tests.serve_helpers import isolated_store, read_sse, serve, settled

ENV_SECRET = "supersecret123"
API_KEY = "sk-configured-abcdef123456"
COMMAND = f"echo {ENV_SECRET}; echo {API_KEY}"


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
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


KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"
NEW_TEXT = (
    "key =\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
    f"{KEY_BODY}\nAAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n"
)


@pytest.mark.parametrize("show_arguments", [False, True])
async def test_a_private_key_in_an_edit_is_masked_in_the_question_events_and_history(
    server: ScriptedServer, workspace: Path, show_arguments: bool
) -> None:
    (workspace / "deploy.cfg").write_text("name = shop\nkey = none\n")
    edit = {"path": "deploy.cfg", "edits": [{"old_text": "key = none\n", "new_text": NEW_TEXT}]}
    server.push(tool_reply([("edit", edit)]), text_reply("key added"))
    async with serve(
        server, workspace, show_arguments=show_arguments, settings={"approval": "ask"}
    ) as srv:
        sid = await srv.new_session()
        raw: list[str] = []
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "add the key"}
        ) as stream:
            events = await read_sse(
                stream, lambda es: any(e.event == "approval_request" for e in es), raw=raw
            )
            question = events[-1].data
            raw.append((await srv.client.get(f"/api/sessions/{sid}")).text)
            answered = await srv.client.post(
                f"/api/sessions/{sid}/approvals/{question['request_id']}",
                json={"decision": "allow"},
            )
            assert answered.status_code == 200
            events += await read_sse(stream, settled, raw=raw)
        async with srv.client.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
        ) as stream:
            await read_sse(stream, settled, raw=raw)
        history = (await srv.client.get(f"/api/sessions/{sid}")).json()["messages"]
        raw.append(str(history))
        raw.append((await srv.client.get("/api/sessions")).text)
    sent = "\n".join(raw)

    assert KEY_BODY in (workspace / "deploy.cfg").read_text()  # the edit was made
    assert KEY_BODY not in sent
    # The question shows the diff whatever the flag, the key's body masked.
    assert question["path"] == "deploy.cfg"
    assert (
        "+-----BEGIN OPENSSH PRIVATE KEY-----***-----END OPENSSH PRIVATE KEY-----"
        in (question["preview"])
    )
    assert "-key = none" in question["preview"]
    end = next(e.data for e in events if e.event == "tool_execution_end")
    tool_message = next(m for m in history if m["role"] == "tool")
    if show_arguments:
        # Sent whole: the diff, masked.
        assert "-----BEGIN OPENSSH PRIVATE KEY-----***" in end["content"]
        assert "-key = none" in end["content"] and "-key = none" in tool_message["content"]
    else:
        # A summary: the result's first line, no diff, no old or new text.
        assert end["content"] == tool_message["content"] == "applied 1 edit to deploy.cfg"
        others = [e.data for e in events if e.event != "approval_request"]
        assert "key = none" not in str(others) and "key = none" not in str(history)


async def test_the_real_ink_serve_masks_the_environment_the_key_and_the_diff(
    server: ScriptedServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's report against the real `ink serve` (its own Redactor, built from the
    environment, the configured key and its token): a `!env` line and an edit's question
    and result leave no secret, and without --show-tool-arguments the edit's old and new
    text go out in its question only."""
    import json

    from tests.serve_process import ink_serve, serve_env

    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    key = serve_env(tmp_path, server)["INK_API_KEY"]
    (workspace / "cart.py").write_text("def total(items):\n    return sum(items)\n")
    edit = {"old_text": "return sum(items)", "new_text": f"return 0  # {PASSWORD}"}
    server.push(tool_reply([("edit", {"path": "cart.py", "edits": [edit]})]), text_reply("ok"))
    raw: list[str] = []
    async with ink_serve(server, workspace, tmp_path / "home", "--approval", "ask") as ink:
        token = ink.client.headers["Authorization"].split()[-1]
        sid = await ink.new_session()
        url = f"/api/sessions/{sid}/messages?wait=settled"
        async with ink.client.stream("POST", url, json={"text": "!env"}) as stream:
            await read_sse(stream, settled, raw=raw, within=30)
        async with ink.client.stream("POST", url, json={"text": "zero it"}) as stream:
            events = await read_sse(
                stream, lambda es: any(e.event == "approval_request" for e in es), raw=raw
            )
            question = events[-1].data
            raw.append((await ink.client.get(f"/api/sessions/{sid}")).text)
            answered = await ink.client.post(
                f"/api/sessions/{sid}/approvals/{question['request_id']}",
                json={"decision": "allow"},
            )
            assert answered.status_code == 200
            events += await read_sse(stream, settled, raw=raw, within=30)
        async with ink.client.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
        ) as stream:
            replayed = await read_sse(stream, settled, raw=raw, within=30)
        after = [
            (await ink.client.get(path)).text for path in (f"/api/sessions/{sid}", "/api/sessions")
        ]
    sent = "\n".join([*raw, *after])

    assert PASSWORD in (workspace / "cart.py").read_text()  # the edit was made
    assert "DB_PASSWORD=***" in sent  # the env line's output went out, masked
    for secret in (PASSWORD, key, token):
        assert secret not in sent
    # The question shows the edit, masked; nothing else carries its text.
    assert question["arguments"]["edits"][0]["new_text"] == "return 0  # ***"
    assert "-    return sum(items)" in question["preview"]
    others = [e.data for e in [*events, *replayed] if e.event != "approval_request"]
    for text in ("return sum(items)", "return 0"):
        assert not any(text in json.dumps(e) for e in others), text
        assert not any(text in page for page in after), text
    end = next(e for e in others if e["type"] == "tool_execution_end")
    assert end["content"] == "applied 1 edit to cart.py"
