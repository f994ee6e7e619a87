"""`ink serve` speaks strict JSON (RFC 8259) whatever a model sends (#20 item 10).

A scripted model returns a tool call whose arguments text holds a bare `NaN` (`{"path":
..., "limit": NaN}`, as `json.dumps` writes it). Through the real `ink serve`: every SSE
data line (the event stream and a `?wait=settled` prompt's), `GET /api/sessions/{id}`
and the session file parse with a parser that refuses NaN/Infinity, and the session
opens again after a restart. A session file from before the writer was strict, holding
bare `NaN` in a tool call's arguments and a result's details, still opens: those values
come back as the string "NaN" and every answer about it is strict JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scripted_server import ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import read_sse, settled
from tests.serve_process import InkServe, ink_serve, strict_loads

WITHIN = 60.0


def _data_lines(raw: list[str]) -> list[Any]:
    """Each SSE data line, parsed strictly."""
    return [strict_loads(line[len("data:") :]) for line in raw if line.startswith("data:")]


async def _prompt_both_ways(ink: InkServe, sid: str, text: str) -> tuple[list[str], list[str]]:
    """Raw SSE lines of one prompt: from the event stream and from `?wait=settled`."""
    listened: list[str] = []
    waited: list[str] = []
    url = f"/api/sessions/{sid}/events"
    last = (await ink.state(sid))["last_seq"]
    async with ink.client.stream("GET", url, headers={"Last-Event-ID": str(last)}) as events:
        assert events.status_code == 200
        post = f"/api/sessions/{sid}/messages?wait=settled"
        async with ink.client.stream("POST", post, json={"text": text}) as answer:
            assert answer.status_code == 200
            await read_sse(answer, settled, within=WITHIN, raw=waited)
        await read_sse(events, settled, within=WITHIN, raw=listened)
    return listened, waited


def _calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for m in messages if m["role"] == "assistant" for c in m["tool_calls"]]


def _file_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


async def test_nan_from_the_model_is_strict_json_everywhere_and_the_session_reopens(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    nan_call = ("read", {"path": "sum.py", "limit": float("nan")})
    assert "NaN" in json.dumps(nan_call[1])  # the scripted arguments text holds bare NaN
    server.push(tool_reply([nan_call]), text_reply("read it"), text_reply("still here"))

    async with ink_serve(server, workspace, home, "--show-tool-arguments") as ink:
        sid = await ink.new_session()
        listened, waited = await _prompt_both_ways(ink, sid, "read it with NaN")
        for raw in (listened, waited):
            events = _data_lines(raw)
            assert [e["type"] for e in events].count("agent_settled") == 1
            assert any(e["type"] == "message_end" and e["message"]["tool_calls"] for e in events)
        shown = await ink.client.get(f"/api/sessions/{sid}")
        assert shown.status_code == 200, shown.text
        body = strict_loads(shown.text)
        assert [c["name"] for c in _calls(body["messages"])] == ["read"]
        assert await ink.stop() == 143
        path = ink.session_file(sid)

    for line in _file_lines(path):
        strict_loads(line)

    async with ink_serve(server, workspace, home, "--show-tool-arguments") as ink:
        state = await ink.resume(sid)
        assert state["message_count"] >= 2
        body = strict_loads((await ink.client.get(f"/api/sessions/{sid}")).text)
        assert [c["name"] for c in _calls(body["messages"])] == ["read"]
        assert await ink.stop() == 143


def _as_an_older_writer_wrote_it(path: Path) -> int:
    """Put bare NaN into the tool call's arguments and the result's details, as the
    writer did before it was strict. Returns the number of lines in the file."""
    lines = _file_lines(path)
    entries = [json.loads(line) for line in lines]
    for entry in entries:
        if entry["type"] == "assistant":
            for call in entry["tool_calls"]:
                call["arguments"] = {"path": "sum.py", "limit": float("nan")}
        elif entry["type"] == "tool_result":
            entry["details"] = {"ratio": float("inf")}
    # json.dumps writes NaN and Infinity bare: what an older ink left on disk.
    text = "".join(json.dumps(entry) + "\n" for entry in entries)
    assert "NaN" in text and "Infinity" in text
    path.write_text(text)
    return len(entries)


async def test_a_session_file_holding_bare_nan_opens_and_answers_strict_json(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    server.push(
        tool_reply([("read", {"path": "sum.py"})]), text_reply("read it"), text_reply("again")
    )
    async with ink_serve(server, workspace, home, "--show-tool-arguments") as ink:
        sid = await ink.new_session()
        await _prompt_both_ways(ink, sid, "read the file")
        assert await ink.stop() == 143
        path = ink.session_file(sid)
    old_lines = _as_an_older_writer_wrote_it(path)

    async with ink_serve(server, workspace, home, "--show-tool-arguments") as ink:
        await ink.resume(sid)
        shown = await ink.client.get(f"/api/sessions/{sid}")
        assert shown.status_code == 200, shown.text
        (call,) = _calls(strict_loads(shown.text)["messages"])
        # Read back as the string the strict writer writes: nothing non-finite inside.
        assert call["arguments"] == {"path": "sum.py", "limit": "NaN"}
        listened, waited = await _prompt_both_ways(ink, sid, "go on")
        assert _data_lines(listened) and _data_lines(waited)
        listing = await ink.client.get("/api/sessions")
        assert listing.status_code == 200
        strict_loads(listing.text)
        assert await ink.stop() == 143

    # What this version appended is strict.
    for line in _file_lines(path)[old_lines:]:
        strict_loads(line)
    assert len(_file_lines(path)) > old_lines
