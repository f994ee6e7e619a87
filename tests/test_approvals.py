"""Approvals at the controller, against the loopback server: the policy, answers (once,
for the session by command prefix, always -> the workspace's config file, deny with a
reason the model reads), an interrupt while a question is open, and rules from config."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ink_tui import AgentSession
from ink_tui.control.approval_rules import command_prefix, parse_rule
from ink_tui.control.run_settings import RunSettings
from ink_tui.core.events import ApprovalRequest
from tests.run_helpers import make_controller
from tests.scripted_server import ScriptedServer, text_reply, tool_reply


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, str]]:
    return [m for m in server.requests[index]["messages"] if m["role"] == "tool"]


async def next_question(recorder, seen: int = 0) -> ApprovalRequest:
    """The next approval question after the first `seen` ones."""

    def is_new(event) -> bool:
        return event.type == "approval_request" and len(recorder.of("approval_request")) > seen

    await recorder.wait_for(is_new)
    return recorder.of("approval_request")[seen]


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL", "INK_APPROVAL"):
        monkeypatch.delenv(name, raising=False)


async def test_allow_once_runs_the_call_and_a_second_answer_is_ignored(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch made"})]), text_reply("done"))
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("make a file")
    question = await next_question(recorder)
    assert question.call.arguments == {"command": "touch made"}
    assert question.rule == "bash:touch"
    assert not (workspace / "made").exists()  # nothing runs before the answer
    assert controller.answer_approval(question.request_id, "allow") is True
    assert controller.answer_approval(question.request_id, "deny", "too late") is False
    await controller.wait_idle()
    assert (workspace / "made").exists()
    resolved = recorder.of("approval_resolved")
    assert [(r.decision, r.by) for r in resolved] == [("allow", "user")]
    notices = [n.text for n in recorder.of("notice") if n.kind == "approval"]
    assert any("already answered (allow)" in text and "ignored" in text for text in notices)
    await controller.aclose()


async def test_deny_with_a_reason_reaches_the_model_as_the_error_result(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("write", {"path": "x.txt", "content": "hi\n"})]), text_reply("ok"))
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("write it")
    question = await next_question(recorder)
    assert question.path == "x.txt" and "+hi" in question.preview
    controller.answer_approval(question.request_id, "deny", "  use notes.md instead ")
    await controller.wait_idle()
    assert not (workspace / "x.txt").exists()
    [result] = tool_messages(server, 1)
    assert "Denied" in result["content"]
    assert "Their reason: use notes.md instead" in result["content"]
    await controller.aclose()


async def test_allow_for_the_session_covers_the_command_prefix_not_other_commands(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply(
            [
                ("bash", {"command": "touch a"}, "c1"),
                ("bash", {"command": "touch b"}, "c2"),
                ("bash", {"command": "touch c && touch d"}, "c3"),
                ("bash", {"command": "mkdir e"}, "c4"),
            ]
        ),
        text_reply("done"),
    )
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("files")
    first = await next_question(recorder)
    assert first.call.id == "c1"
    controller.answer_approval(first.request_id, "session")
    # `touch b` runs without a question; `touch c && touch d` has shell syntax: asked.
    second = await next_question(recorder, 1)
    assert second.call.id == "c3" and second.rule is None
    assert (workspace / "b").exists()
    controller.answer_approval(second.request_id, "allow")
    third = await next_question(recorder, 2)
    assert third.call.id == "c4"
    controller.answer_approval(third.request_id, "deny")
    await controller.wait_idle()
    made = [name for name in "abcde" if (workspace / name).exists()]
    assert made == ["a", "b", "c", "d"]
    await controller.aclose()


async def test_questions_of_one_batch_come_one_at_a_time_in_call_order(
    server: ScriptedServer, workspace: Path
) -> None:
    calls = [("bash", {"command": f"touch f{i}"}, f"c{i}") for i in range(3)]
    server.push(tool_reply(calls), text_reply("done"))
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("three")
    for index in range(3):
        question = await next_question(recorder, index)
        assert question.call.id == f"c{index}"
        await asyncio.sleep(0.05)
        # Only this one is open until it is answered.
        assert len(controller.approvals.pending) == 1
        controller.answer_approval(question.request_id, "allow")
    await controller.wait_idle()
    await controller.aclose()


async def test_an_interrupt_during_a_question_denies_aborts_and_restores_the_queue(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch never"})]))
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("go")
    question = await next_question(recorder)
    controller.submit("a steer typed during the question")
    assert controller.interrupt() == "aborting"
    await controller.wait_idle()
    assert not (workspace / "never").exists()
    [resolved] = recorder.of("approval_resolved")
    assert (resolved.decision, resolved.by) == ("deny", "interrupt")
    assert [e.stop_reason for e in recorder.of("run_end")] == ["aborted"]
    [restored] = recorder.of("input_restored")
    assert restored.text == "a steer typed during the question"
    # The question is closed: a late answer changes nothing.
    assert controller.answer_approval(question.request_id, "allow") is False
    await controller.aclose()


async def test_edits_policy_passes_edits_inside_and_asks_outside_and_for_ink_folder(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    server.push(
        tool_reply(
            [
                ("write", {"path": "in.txt", "content": "x"}, "c1"),
                ("write", {"path": str(outside), "content": "x"}, "c2"),
                ("write", {"path": ".ink/config.toml", "content": "x"}, "c3"),
            ]
        ),
        text_reply("done"),
    )
    controller, recorder = make_controller(
        server, workspace, settings=RunSettings(approval="edits")
    )
    controller.submit("write")
    first = await next_question(recorder)
    assert first.call.id == "c2" and "outside the workspace" in first.why
    assert (workspace / "in.txt").exists()
    controller.answer_approval(first.request_id, "deny")
    second = await next_question(recorder, 1)
    assert second.call.id == "c3" and ".ink/" in second.why
    controller.answer_approval(second.request_id, "deny")
    await controller.wait_idle()
    assert not outside.exists()
    await controller.aclose()


async def test_read_only_tools_never_ask(server: ScriptedServer, workspace: Path) -> None:
    server.push(
        tool_reply([("read", {"path": "README.md"}), ("ls", {}), ("grep", {"pattern": "x"})]),
        text_reply("done"),
    )
    controller, recorder = make_controller(server, workspace, settings=RunSettings(approval="ask"))
    controller.submit("look")
    await controller.wait_idle()
    assert recorder.of("approval_request") == []
    await controller.aclose()


async def test_always_saves_a_rule_into_the_workspace_config_keeping_what_is_there(
    server: ScriptedServer, workspace: Path
) -> None:
    config = workspace / ".ink" / "config.toml"
    config.parent.mkdir()
    config.write_text('# my settings\nmax_iterations = 7\n\n[approval]\nallow = [\n  "edit",\n]\n')
    server.push(
        tool_reply([("bash", {"command": "touch one"})]),
        text_reply("first"),
        tool_reply([("bash", {"command": "touch two"})]),
        text_reply("second"),
    )
    # Trusted (tests/test_project_trust.py: an untrusted file's rules are held back).
    trusted = {"approval": "ask", "extensions": False, "trust_project": True}
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="m", **trusted
    ) as session:
        questions: list[dict] = []
        asked = asyncio.Event()

        def on_event(event: dict) -> None:
            if event["type"] == "approval_request":
                questions.append(event)
                asked.set()

        session.subscribe(on_event)
        running = session.start("one")
        await asyncio.wait_for(asked.wait(), 10)
        assert questions[0]["decisions"] == ["allow", "session", "always", "deny"]
        session.answer_approval(questions[0]["request_id"], "always")
        await running
        with pytest.raises(ValueError, match="already answered"):
            session.answer_approval(questions[0]["request_id"], "allow")
    text = config.read_text()
    assert text.startswith("# my settings\nmax_iterations = 7\n")
    assert 'allow = ["edit", "bash:touch"]' in text
    # A new session reads the rule: `touch two` runs without a question.
    async with AgentSession.open(
        workspace, base_url=server.base_url, model="m", **trusted
    ) as session:
        seen: list[str] = []
        session.subscribe(lambda e: seen.append(e["type"]))
        await session.prompt("two")
    assert "approval_request" not in seen
    assert (workspace / "two").exists()


async def test_programs_default_to_auto_unless_they_ask_for_a_policy(
    server: ScriptedServer, workspace: Path
) -> None:
    config = workspace / ".ink" / "config.toml"
    config.parent.mkdir()
    config.write_text('[approval]\npolicy = "ask"\n')
    server.push(tool_reply([("bash", {"command": "touch ran"})]), text_reply("ok"))
    async with AgentSession.open(workspace, base_url=server.base_url, model="m") as session:
        assert session.snapshot()["approval"] == "auto"
        await session.prompt("go")
    assert (workspace / "ran").exists()


def test_bad_rules_in_config_are_reported_with_file_and_line(workspace: Path) -> None:
    from ink_tui.session.config import load_config

    config_file = workspace / ".ink" / "config.toml"
    config_file.parent.mkdir()
    config_file.write_text('[approval]\npolicy = "sometimes"\nallow = ["read", "bash:a;b"]\n')
    config = load_config(workspace, environ={})
    problems = "\n".join(config.problems)
    assert "line 2" in problems and "'approval.policy' must be one of" in problems
    assert "line 3" in problems and "rule 'read'" in problems
    assert config.run_settings().approval == "ask"
    assert config.run_settings().approval_allow == ()


def test_rules_from_both_config_files_add_up(workspace: Path, tmp_path: Path) -> None:
    from ink_tui.session.config import load_config

    user = tmp_path / "user.toml"
    user.write_text('[approval]\nallow = ["bash:pytest"]\n')
    ws = workspace / ".ink" / "config.toml"
    ws.parent.mkdir()
    ws.write_text('[approval]\nallow = ["edit", "bash:pytest"]\n')
    config = load_config(workspace, environ={}, user_config_path=user, trust_project=True)
    assert config.run_settings().approval_allow == ("bash:pytest", "edit")


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("pytest -q tests", ("pytest",)),
        ("git status --short", ("git", "status")),
        ("python -m pytest -x", ("python", "-m", "pytest")),
        ("npm run test", ("npm", "run")),
        ("pytest && rm -rf ~", None),
        ("echo $HOME", None),
        ("FOO=1 pytest", None),
        ("bash -c 'rm -rf /'", None),
    ],
)
def test_the_session_prefix_of_a_command(command: str, prefix: tuple[str, ...] | None) -> None:
    assert command_prefix(command) == prefix


def test_a_prefix_rule_never_matches_a_compound_command() -> None:
    rule = parse_rule("bash:pytest")
    assert rule.matches("bash", {"command": "pytest -q"})
    assert not rule.matches("bash", {"command": "pytest; rm -rf ~"})
    assert not rule.matches("bash", {"command": "pytest-watch"})
    assert not rule.matches("edit", {"path": "x"})


async def test_rpc_approve_answers_once_and_rpc_defaults_to_auto(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    import os

    from ink_tui.rpc_client import RpcClient, RpcError

    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    model = ["--base-url", server.base_url, "--model", "m", "--api-key", "k"]
    server.push(tool_reply([("bash", {"command": "touch auto"})]), text_reply("ok"))
    async with RpcClient.spawn(model, cwd=workspace, env=env) as ink:
        await ink.command("prompt", message="go")
        await ink.wait_settled()
        assert (await ink.command("get_state"))["approval"] == "auto"
    assert (workspace / "auto").exists()

    server.push(tool_reply([("bash", {"command": "touch asked"})]), text_reply("ok"))
    async with RpcClient.spawn([*model, "--approval", "ask"], cwd=workspace, env=env) as ink:
        await ink.command("prompt", message="go")
        asked = await ink.wait_for(lambda e: e["type"] == "approval_request")
        assert asked["arguments"] == {"command": "touch asked"} and asked["rule"] == "bash:touch"
        answer = {"request_id": asked["request_id"], "decision": "allow"}
        assert await ink.command("approve", **answer) == answer
        with pytest.raises(RpcError, match="already answered"):
            await ink.command("approve", request_id=asked["request_id"], decision="deny")
        await ink.wait_settled()
        resolved = [e for e in ink.seen if e["type"] == "approval_resolved"]
        assert [(e["decision"], e["by"]) for e in resolved] == [("allow", "user")]
    assert (workspace / "asked").exists()
