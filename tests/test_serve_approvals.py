"""`ink serve` asks before bash / write / edit, as the TUI does: an `approval_request`
on the stream (with the command, whatever --show-tool-arguments says), the open
questions in the session's state, `POST .../approvals/{id}` answering each once, and an
abort (or a waited prompt's hang-up) denying what is open. All over HTTP against a real
uvicorn and the scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import Served, SseEvent, read_sse, serve, settled

ASK = {"approval": "ask"}


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("INK_API_KEY", "OPENAI_API_KEY", "INK_BASE_URL", "INK_MODEL", "INK_APPROVAL"):
        monkeypatch.delenv(name, raising=False)
    yield home


def asked(events: list[SseEvent]) -> bool:
    return any(e.event == "approval_request" for e in events)


def of(events: list[SseEvent], kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.event == kind]


async def until(
    srv: Served, sid: str, check: Callable[[dict[str, Any]], bool], within: float = 10.0
) -> dict[str, Any]:
    """The session's state once `check` holds (polled, with a deadline)."""

    async def poll() -> dict[str, Any]:
        while True:
            state = await srv.state(sid)
            if check(state):
                return state
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(poll(), within)


def answer(srv: Served, sid: str, request_id: str, **body: Any) -> Any:
    return srv.client.post(f"/api/sessions/{sid}/approvals/{request_id}", json=body)


async def test_a_command_waits_for_the_answer_and_allow_runs_it_once(
    server: ScriptedServer, workspace: Path
) -> None:
    command = "echo ran > marker.txt"
    server.push(tool_reply([("bash", {"command": command})]), text_reply("made it"))
    async with serve(server, workspace, settings=ASK) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
        ) as stream:
            await srv.client.post(f"/api/sessions/{sid}/messages", json={"text": "mark it"})
            events = await read_sse(stream, asked)
            question = of(events, "approval_request")[0]
            # The question says what it asks about, though tool arguments are not shown.
            assert question["tool_name"] == "bash"
            assert question["arguments"]["command"] == command
            assert question["decisions"] == ["allow", "deny"]  # `>`: no rule to offer
            assert of(events, "tool_execution_start")[0]["arguments"] == {}
            request_id = question["request_id"]

            # Waiting: nothing ran, and the state holds the question (a reloaded page).
            state = await srv.state(sid)
            assert state["busy"] and state["approvals_open"] == [request_id]
            # Said as waiting, as RPC's get_state says it (a page shows the words).
            assert state["waiting"] == "approval"
            assert [q["request_id"] for q in state["approvals"]] == [request_id]
            assert state["approvals"][0]["arguments"]["command"] == command
            assert not (workspace / "marker.txt").exists()

            for bad in (
                {"decision": "maybe"},
                {"decision": "session"},
                {"decision": "deny", "reason": 3},
            ):
                refused = await answer(srv, sid, request_id, **bad)
                assert refused.status_code == 400, bad
                assert refused.json()["error"] == "bad_request"
            unknown = await answer(srv, sid, "approval-99", decision="allow")
            assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"

            allowed = await answer(srv, sid, request_id, decision="allow")
            assert allowed.status_code == 200
            assert allowed.json() == {"request_id": request_id, "decision": "allow"}
            events = await read_sse(stream, settled)

        again = await answer(srv, sid, request_id, decision="deny")
        state = await srv.state(sid)

    assert again.status_code == 409 and again.json()["error"] == "answered"
    assert "already answered (allow)" in again.json()["message"]
    assert (workspace / "marker.txt").read_text() == "ran\n"
    resolved = of(events, "approval_resolved")
    assert [(r["decision"], r["by"]) for r in resolved] == [("allow", "user")]
    assert state["approvals"] == [] and state["approvals_open"] == []
    assert state["waiting"] is None
    assert "command" not in str(of(events, "tool_execution_end"))


async def test_deny_with_a_reason_runs_nothing_and_the_model_reads_the_reason(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch marker.txt"})]), text_reply("ok"))
    async with serve(server, workspace, settings=ASK) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "touch it"}
        ) as stream:
            events = await read_sse(stream, asked)
            question = of(events, "approval_request")[0]
            # A plain command: it can become a rule ("bash:touch").
            assert question["decisions"] == ["allow", "session", "always", "deny"]
            assert question["rule"] == "bash:touch"
            denied = await answer(
                srv, sid, question["request_id"], decision="deny", reason="not in this repo"
            )
            assert denied.status_code == 200
            events = await read_sse(stream, settled)

    assert not (workspace / "marker.txt").exists()
    resolved = of(events, "approval_resolved")[0]
    assert resolved["decision"] == "deny" and resolved["reason"] == "not in this repo"
    tool_result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][-1]
    assert "Their reason: not in this repo" in tool_result["content"]


async def test_always_saves_a_rule_and_the_next_such_call_is_not_asked(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(
        tool_reply([("bash", {"command": "touch first.txt"})]),
        tool_reply([("bash", {"command": "touch second.txt"})]),
        text_reply("both"),
    )
    async with serve(server, workspace, settings=ASK) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "touch two"}
        ) as stream:
            events = await read_sse(stream, asked)
            request_id = of(events, "approval_request")[0]["request_id"]
            assert (await answer(srv, sid, request_id, decision="always")).status_code == 200
            events += await read_sse(stream, settled)

    assert (workspace / "first.txt").exists() and (workspace / "second.txt").exists()
    assert len(of(events, "approval_request")) == 1
    assert "bash:touch" in (workspace / ".ink" / "config.toml").read_text()


async def test_an_abort_denies_the_open_question_and_a_later_answer_is_refused(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch marker.txt"})]))
    async with serve(server, workspace, settings=ASK) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
        ) as stream:
            await srv.client.post(f"/api/sessions/{sid}/messages", json={"text": "touch it"})
            events = await read_sse(stream, asked)
            request_id = of(events, "approval_request")[0]["request_id"]
            aborted = await srv.client.post(f"/api/sessions/{sid}/abort")
            assert aborted.status_code == 200 and aborted.json()["aborted"] is True
            events = await read_sse(stream, settled)
        late = await answer(srv, sid, request_id, decision="allow")
        state = await srv.state(sid)

    resolved = of(events, "approval_resolved")[0]
    assert (resolved["decision"], resolved["by"]) == ("deny", "interrupt")
    kinds = [e.event for e in events]
    assert kinds.index("approval_resolved") < kinds.index("agent_settled")
    assert late.status_code == 409 and "interrupted" in late.json()["message"]
    assert state["approvals"] == [] and not state["busy"]
    assert not (workspace / "marker.txt").exists()


async def test_hanging_up_on_a_waited_prompt_denies_the_open_question(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(tool_reply([("bash", {"command": "touch marker.txt"})]))
    async with serve(server, workspace, settings=ASK) as srv:
        sid = await srv.new_session()
        async with httpx.AsyncClient(
            base_url=srv.base, headers={"Authorization": f"Bearer {srv.token}"}, timeout=15
        ) as waiting:
            async with waiting.stream(
                "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "touch it"}
            ) as stream:
                events = await read_sse(stream, asked)
            request_id = of(events, "approval_request")[0]["request_id"]
        # The client is gone: the run is aborted, and its question closed as denied.
        state = await until(srv, sid, lambda s: not s["busy"])
        late = await answer(srv, sid, request_id, decision="allow")
        async with srv.client.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
        ) as replay:
            replayed = await read_sse(replay, settled)

    assert state["approvals"] == []
    assert late.status_code == 409
    resolved = of(replayed, "approval_resolved")[0]
    assert (resolved["request_id"], resolved["by"]) == (request_id, "interrupt")
    assert not (workspace / "marker.txt").exists()


async def test_an_edit_question_carries_the_path_and_the_diff(
    server: ScriptedServer, workspace: Path
) -> None:
    edit = {"path": "sum.py", "edits": [{"old_text": "sum(xs)", "new_text": "sum(xs) * 2"}]}
    server.push(tool_reply([("edit", edit)]), text_reply("doubled"))
    async with serve(server, workspace, settings={"approval": "edits"}) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "double"}
        ) as stream:
            events = await read_sse(stream, settled)
        # `edits` lets an edit inside the workspace through: nothing is asked.
        assert not asked(events)
        assert "sum(xs) * 2" in (workspace / "sum.py").read_text()

    server.push(tool_reply([("edit", {**edit, "path": "../outside.py"})]), text_reply("no"))
    (workspace.parent / "outside.py").write_text("def total(xs):\n    return sum(xs)\n")
    async with serve(server, workspace, settings={"approval": "edits"}) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "outside"}
        ) as stream:
            events = await read_sse(stream, asked)
            question = of(events, "approval_request")[0]
            assert question["tool_name"] == "edit"
            assert "outside the workspace" in question["why"]
            assert question["path"] and question["path"].endswith("outside.py")
            assert "-    return sum(xs)" in question["preview"]
            assert "+    return sum(xs) * 2" in question["preview"]
            assert question["arguments"]["edits"] == edit["edits"]
            denied = await answer(srv, sid, question["request_id"], decision="deny")
            assert denied.status_code == 200
            await read_sse(stream, settled)
    assert "* 2" not in (workspace.parent / "outside.py").read_text()
