"""`ink serve`'s event streams: reconnecting with Last-Event-ID replays what was missed
and nothing twice, a gap older than the buffer says so, and a client that hangs up on a
prompt tied to its connection (`?wait=settled`) aborts the run all the way down: the
model's HTTP stream closed, the bash command's process group gone."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.process_markers import kill_marked, new_marker, wait_alive, wait_gone
from tests.run_helpers import wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import covered, isolated_store, read_sse, serve, settled


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
    yield home


async def test_reconnect_with_last_event_id_replays_the_missed_events_once(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("first part, then the rest of a longer answer", pieces=8, gate=gate))
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        url = f"/api/sessions/{sid}/events"
        async with srv.client.stream("GET", url, headers={"Last-Event-ID": "0"}) as stream:
            await srv.client.post(f"/api/sessions/{sid}/messages", json={"text": "go"})
            await wait_gate(gate)
            first = await read_sse(stream, lambda es: any(e.event == "message_update" for e in es))
        # The client is gone; the run goes on without it.
        last_seen = first[-1].id
        assert last_seen is not None
        gate.open()
        await srv.wait_idle(sid)
        async with srv.client.stream(
            "GET", url, headers={"Last-Event-ID": str(last_seen)}
        ) as stream:
            second = await read_sse(stream, settled)
        # The same again through the query parameter (for clients that cannot set it).
        async with srv.client.stream("GET", f"{url}?last_event_id={last_seen}") as stream:
            again = await read_sse(stream, settled)
        state = await srv.state(sid)

    seqs = covered(first) + covered(second)
    assert seqs == list(range(1, state["last_seq"] + 1))
    assert covered(again) == covered(second)
    ids = [e.id for e in first + second]
    assert ids == sorted(set(ids))
    assert all(e.id == e.data["seq"] for e in first + second)
    assert all(e.event == e.data["type"] and e.data["v"] == 1 for e in first + second)
    text = "".join(e.data["delta"]["text"] for e in first + second if e.event == "message_update")
    assert text == "first part, then the rest of a longer answer"


async def test_a_gap_older_than_the_buffer_is_announced_then_live_events_follow(
    server: ScriptedServer, workspace: Path
) -> None:
    server.push(text_reply("one two three four five six", pieces=6), text_reply("again"))
    async with serve(server, workspace, buffer_capacity=5) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "go"}
        ) as stream:
            await read_sse(stream, settled)
        last_seq = (await srv.state(sid))["last_seq"]
        assert last_seq > 6
        url = f"/api/sessions/{sid}/events"
        for stale in ("1", str(last_seq + 100)):  # too old; from a server since restarted
            async with srv.client.stream("GET", url, headers={"Last-Event-ID": stale}) as stream:
                if stale == "1":
                    await srv.client.post(f"/api/sessions/{sid}/messages", json={"text": "more"})
                    events = await read_sse(stream, settled)
                else:
                    events = await read_sse(stream, lambda es: len(es) >= 1)
            gap = events[0]
            assert gap.event == "replay_gap" and gap.data["v"] == 1
            assert gap.data["last_event_id"] == int(stale)
            assert gap.data["last_seq"] == gap.id == last_seq
            if stale == "1":
                assert gap.data["oldest_seq"] == last_seq - 4
                # After the gap, only what happened since: nothing the state already holds.
                assert covered(events[1:]) == list(range(last_seq + 1, events[-1].id + 1))
                last_seq = (await srv.state(sid))["last_seq"]


async def test_hanging_up_on_a_waited_prompt_closes_the_model_request(
    server: ScriptedServer, workspace: Path
) -> None:
    gate = Gate()
    server.push(text_reply("a long answer", gate=gate))
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        async with srv.client.stream(
            "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "go"}
        ) as stream:
            await wait_gate(gate)
            await read_sse(stream, lambda es: any(e.event == "message_update" for e in es))
        # The response is closed: the abort chain runs down to the model's HTTP stream.
        assert await asyncio.to_thread(server.disconnected.wait, 5), "the request stayed open"
        state = await srv.wait_idle(sid, within=5)
    assert state["state"] == "idle"
    assert server.disconnects == [0]


async def test_hanging_up_on_a_waited_prompt_kills_the_running_command(
    server: ScriptedServer, workspace: Path
) -> None:
    marker = new_marker() + "1"
    server.push(tool_reply([("bash", {"command": f"sleep {marker}"})]))
    try:
        async with serve(server, workspace) as srv:
            sid = await srv.new_session()
            async with srv.client.stream(
                "POST", f"/api/sessions/{sid}/messages?wait=settled", json={"text": "go"}
            ) as stream:
                await read_sse(
                    stream, lambda es: any(e.event == "tool_execution_start" for e in es)
                )
                await asyncio.to_thread(wait_alive, [marker])
            left = await asyncio.to_thread(wait_gone, [marker], 5.0)
            assert left == [], "the command outlived the hang-up"
            state = await srv.wait_idle(sid, within=5)
        assert state["state"] == "idle"
        # No model call after the abort: the run stopped at the tool.
        assert len(server.requests) == 1
    finally:
        kill_marked(marker)
