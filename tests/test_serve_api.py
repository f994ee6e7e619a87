"""`ink serve`'s JSON routes against a real uvicorn on a loopback port and the scripted
model server: the busy rule (429 or queued), where queued input reaches the model, the
per-session lock under concurrent requests, sessions running in parallel, the queue."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.run_helpers import user_texts, wait_gate, wait_requests
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import isolated_store, read_sse, serve, settled


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
    yield home


async def test_busy_session_answers_429_and_queues_steer_and_follow_up_at_their_points(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(
        tool_reply([("read", {"path": "README.md"})], gate=gate),
        text_reply("took the steer"),
        text_reply("did the follow-up"),
    )
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        url = f"/api/sessions/{sid}/messages"
        started = await srv.client.post(url, json={"text": "look at the readme"})
        assert started.status_code == 202 and started.json() == {"started": True}
        await wait_gate(gate)

        busy = await srv.client.post(url, json={"text": "a new task"})
        assert busy.status_code == 429
        assert busy.headers["retry-after"] == "1"
        assert busy.json()["error"] == "busy"

        steer = await srv.client.post(url, json={"text": "use pytest", "deliver_as": "steer"})
        follow = await srv.client.post(url, json={"text": "then run it", "deliver_as": "follow_up"})
        assert steer.status_code == follow.status_code == 202
        assert steer.json()["queued"]["mode"] == "steer"
        assert follow.json()["queued"]["mode"] == "follow_up"
        queue = (await srv.client.get(f"/api/sessions/{sid}/queue")).json()["entries"]
        assert [(e["text"], e["mode"]) for e in queue] == [
            ("use pytest", "steer"),
            ("then run it", "follow_up"),
        ]
        gate.open()
        state = await srv.wait_idle(sid)

    assert state["message_count"] > 0 and state["queue"] == []
    assert "a new task" not in str(server.requests)
    # The steer reached the very next model call, right after the tool batch...
    second = server.requests[1]
    assert user_texts(second)[-1] == "use pytest"
    assert second["messages"][-2]["role"] == "tool"
    # ...and the follow-up the call after the model would have stopped.
    third = server.requests[2]
    assert user_texts(third)[-1] == "then run it"
    assert third["messages"][-2] == {"role": "assistant", "content": "took the steer"}


async def test_twenty_concurrent_requests_on_one_session_start_exactly_one_run(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("working", gate=gate), text_reply("took the steers"))
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        url = f"/api/sessions/{sid}/messages"
        bodies = [
            {"text": f"m{i}", **({"deliver_as": "steer"} if i % 2 else {})} for i in range(20)
        ]
        answers = await asyncio.gather(*(srv.client.post(url, json=b) for b in bodies))
        started = [
            i for i, a in enumerate(answers) if a.status_code == 202 and "started" in a.json()
        ]
        assert len(started) == 1
        for index, (body, response) in enumerate(zip(bodies, answers, strict=True)):
            if index in started:
                continue
            if "deliver_as" in body:
                assert response.status_code == 202, response.text
                assert response.json()["queued"]["text"] == body["text"]
            else:
                assert response.status_code == 429, response.text
                assert response.headers["retry-after"] == "1"
        queued = [b["text"] for i, b in enumerate(bodies) if "deliver_as" in b and i not in started]
        await wait_gate(gate)
        gate.open()
        await srv.wait_idle(sid)

    assert len(server.requests) == 2
    first = user_texts(server.requests[0])
    assert first == [bodies[started[0]]["text"]]
    # Every queued steer reached the next call, in the order they were queued.
    steers = user_texts(server.requests[1])[1:]
    assert sorted(steers) == sorted(queued)


async def test_five_sessions_run_in_parallel_and_stream_their_own_events(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(*(text_reply("done", gate=gate) for _ in range(5)))
    async with serve(server, workspace) as srv:
        ids = [await srv.new_session() for _ in range(5)]
        assert len(set(ids)) == 5
        for index, sid in enumerate(ids):
            response = await srv.client.post(
                f"/api/sessions/{sid}/messages", json={"text": f"task {index}"}
            )
            assert response.status_code == 202
        # All five model requests are in flight at once: no session waits for another.
        await wait_requests(server, 5)
        states = [await srv.state(sid) for sid in ids]
        assert all(s["busy"] for s in states)
        listing = (await srv.client.get("/api/sessions")).json()["sessions"]
        assert {row["id"] for row in listing if row["open"] and row["busy"]} == set(ids)

        # One session's events flow while the other four are held mid-stream.
        last = states[0]["last_seq"]
        async with srv.client.stream(
            "GET", f"/api/sessions/{ids[0]}/events", headers={"Last-Event-ID": str(last)}
        ) as stream:
            queued = await srv.client.post(
                f"/api/sessions/{ids[0]}/messages", json={"text": "more", "deliver_as": "steer"}
            )
            assert queued.status_code == 202
            seen = await read_sse(
                stream, lambda es: any(e.event == "queue_update" for e in es), within=5
            )
        assert seen[-1].data["session_id"] == ids[0]
        server.push(text_reply("took it"))
        gate.open()
        for sid in ids:
            await srv.wait_idle(sid)
    prompts = sorted(user_texts(r)[0] for r in server.requests[:5])
    assert prompts == [f"task {i}" for i in range(5)]


async def test_queue_routes_edit_move_remove_and_say_gone(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("busy", gate=gate), text_reply("after"))
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        base = f"/api/sessions/{sid}"
        await srv.client.post(f"{base}/messages", json={"text": "go"})
        await wait_gate(gate)
        ids = []
        for text in ("A", "B", "C"):
            answer = await srv.client.post(
                f"{base}/messages", json={"text": text, "deliver_as": "follow_up"}
            )
            ids.append(answer.json()["queued"]["id"])
        a, b, c = ids
        edited = await srv.client.patch(
            f"{base}/queue/{b}", json={"text": "B2", "mode": "steer", "position": 0}
        )
        assert edited.status_code == 200
        assert [(e["text"], e["mode"]) for e in edited.json()["entries"]] == [
            ("B2", "steer"),
            ("A", "follow_up"),
            ("C", "follow_up"),
        ]
        removed = await srv.client.delete(f"{base}/queue/{a}")
        assert removed.json()["removed"]["text"] == "A"
        gone = await srv.client.delete(f"{base}/queue/{a}")
        assert gone.status_code == 404 and gone.json()["error"] == "gone"
        gone = await srv.client.patch(f"{base}/queue/999", json={"text": "x"})
        assert gone.status_code == 404 and gone.json()["error"] == "gone"
        bad = await srv.client.patch(f"{base}/queue/{c}", json={"mode": "sideways"})
        assert bad.status_code == 400 and bad.json()["error"] == "bad_request"
        cleared = await srv.client.delete(f"{base}/queue")
        assert [e["text"] for e in cleared.json()["removed"]] == ["B2", "C"]
        assert (await srv.client.get(f"{base}/queue")).json() == {"entries": []}
        gate.open()
        await srv.wait_idle(sid)
    assert len(server.requests) == 1


async def test_abort_answers_once_settled_and_hands_queued_input_back(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("long answer", gate=gate))
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        base = f"/api/sessions/{sid}"
        async with srv.client.stream(
            "POST", f"{base}/messages?wait=settled", json={"text": "go"}
        ) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            await wait_gate(gate)
            await srv.client.post(
                f"{base}/messages", json={"text": "later", "deliver_as": "follow_up"}
            )
            aborted = await srv.client.post(f"{base}/abort")
            events = await read_sse(stream, settled)
        assert aborted.status_code == 200
        body = aborted.json()
        assert body["aborted"] is True and body["stop_reason"] == "aborted"
        assert body["restored_text"] == "later"
        assert events[-1].event == "agent_settled"
        assert events[-1].data["restored_text"] == "later"
        assert (await srv.state(sid))["busy"] is False
        idle = await srv.client.post(f"{base}/abort")
        assert idle.json() == {"aborted": False}


async def test_unknown_session_and_bad_bodies_are_json_errors(
    server: ScriptedServer, workspace: Path
) -> None:
    async with serve(server, workspace) as srv:
        missing = await srv.client.get("/api/sessions/nope")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"
        missing = await srv.client.post("/api/sessions/nope/messages", json={"text": "x"})
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"
        sid = await srv.new_session()
        for body in ({}, {"text": "  "}, {"text": "x", "deliver_as": "later"}):
            bad = await srv.client.post(f"/api/sessions/{sid}/messages", json=body)
            assert bad.status_code == 400 and bad.json()["error"] == "bad_request", body
        bad = await srv.client.post(
            f"/api/sessions/{sid}/messages",
            content=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        assert bad.status_code == 400
        unknown = await srv.client.post("/api/sessions", json={"resume": "ffffffffff"})
        assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
        route = await srv.client.get("/api/nothing-here")
        assert route.status_code == 404 and route.json()["error"] == "not_found"
