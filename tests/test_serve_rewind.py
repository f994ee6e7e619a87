"""Going back through the real `ink serve` process (issue #22, item 5): a write and a
command change files, the preview names them, a rewind of both puts them back (what the
command made is gone, what the write changed is back), the next prompt's request lacks
the rewound message and keeps the earlier one, the tree shows two branches under one
parent, the file restore can be undone, and a fork opens a new session here. Refused:
while a run goes (409 busy), an unknown entry (404), bad input (400), and requests
without the token or from another origin, like every other route."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.run_helpers import user_texts, wait_gate
from tests.scripted_server import Gate, ScriptedServer, text_reply, tool_reply
from tests.serve_helpers import SseEvent, read_sse, settled
from tests.serve_process import WITHIN, InkServe, ink_serve, strict_loads

ORIGINAL_SUM = "def total(xs):\n    return sum(xs)\n"
API_KEY = "test-key-0123456789"  # serve_process's INK_API_KEY: masked in every answer


@pytest.fixture
async def ink(server: ScriptedServer, workspace: Path, tmp_path: Path) -> AsyncIterator[InkServe]:
    async with ink_serve(server, workspace, tmp_path / "home") as running:
        yield running


async def prompt(ink: InkServe, sid: str, text: str) -> list[SseEvent]:
    """Send `text` and read its run's events to `agent_settled`."""
    url = f"/api/sessions/{sid}/messages?wait=settled"
    async with ink.client.stream("POST", url, json={"text": text}) as stream:
        assert stream.status_code == 200
        events = await read_sse(stream, settled, within=WITHIN)
    ended = next(e for e in events if e.event == "agent_settled")
    assert ended.data["stop_reason"] == "completed", ended.data
    return events


def entry_of(events: list[SseEvent], text: str) -> str:
    for event in events:
        if event.event == "user_message" and event.data["text"] == text:
            return str(event.data["entry_id"])
    raise AssertionError(f"no user_message {text!r}")


async def post(ink: InkServe, sid: str, rest: str, body: Any = None) -> httpx.Response:
    if body is None:
        return await ink.client.post(f"/api/sessions/{sid}{rest}")
    return await ink.client.post(f"/api/sessions/{sid}{rest}", json=body)


async def get(ink: InkServe, sid: str, rest: str = "") -> dict[str, Any]:
    answer = await ink.client.get(f"/api/sessions/{sid}{rest}")
    assert answer.status_code == 200, answer.text
    return dict(strict_loads(answer.text))


async def users_shown(ink: InkServe, sid: str) -> list[str]:
    messages = (await get(ink, sid))["messages"]
    return [m["content"] for m in messages if m["role"] == "user"]


async def test_rewind_both_restores_files_and_conversation_and_undo_brings_them_back(
    ink: InkServe, server: ScriptedServer, workspace: Path
) -> None:
    sid = await ink.new_session()
    server.push(text_reply("Looked."))
    await prompt(ink, sid, "look first")
    server.push(
        tool_reply([("write", {"path": "sum.py", "content": "def total(xs):\n    return 0\n"})]),
        tool_reply(
            [("bash", {"command": "printf made > created.txt && mkdir -p d/e && touch d/e/f"})]
        ),
        text_reply("Changed."),
    )
    events = await prompt(ink, sid, "change things")
    assert (workspace / "created.txt").read_text() == "made"
    change_id = entry_of(events, "change things")
    # A reloaded page finds the same id on the message.
    shown = (await get(ink, sid))["messages"]
    assert [m["entry_id"] for m in shown if m["role"] == "user"][1] == change_id

    turns = (await get(ink, sid, "/user-messages"))["messages"]
    assert [t["text"] for t in turns] == ["look first", "change things"]
    assert {"sum.py", "created.txt"} <= set(turns[1]["changed_files"])

    answer = await post(ink, sid, "/rewind/preview", {"entry_id": change_id})
    assert answer.status_code == 200, answer.text
    preview = answer.json()
    assert preview["entry_id"] == change_id and preview["text"] == "change things"
    assert preview["checkpoint"]
    status = {f["path"]: f["status"] for f in preview["files"]}
    assert status["sum.py"] == "modified" and status["created.txt"] == "deleted"
    assert all({"added", "removed"} <= set(f) for f in preview["files"])
    # A preview changes nothing.
    assert (workspace / "created.txt").exists()

    last = (await ink.state(sid))["last_seq"]
    answer = await post(ink, sid, "/rewind", {"entry_id": change_id, "restore": "both"})
    assert answer.status_code == 200, answer.text
    done = answer.json()
    assert done["text"] == "change things"
    assert {"sum.py", "created.txt"} <= set(done["restored_files"])
    assert not (workspace / "created.txt").exists() and not (workspace / "d").exists()
    assert (workspace / "sum.py").read_text() == ORIGINAL_SUM
    assert await users_shown(ink, sid) == ["look first"]
    # Every page of the session hears of it (and reloads).
    headers = {"Last-Event-ID": str(last)}
    async with ink.client.stream("GET", f"/api/sessions/{sid}/events", headers=headers) as stream:
        heard = await read_sse(stream, lambda seen: any(e.event == "rewound" for e in seen))
    rewound = next(e for e in heard if e.event == "rewound").data
    assert rewound["restore"] == "both" and rewound["entry_id"] == change_id

    server.push(text_reply("Other way."))
    await prompt(ink, sid, "try another way")
    assert user_texts(server.requests[-1]) == ["look first", "try another way"]

    tree = await get(ink, sid, "/tree")
    users = {n["text"]: n for n in tree["tree"] if n["role"] == "user"}
    old, new = users["change things"], users["try another way"]
    assert old["parent_id"] == new["parent_id"] is not None
    parent = next(n for n in tree["tree"] if n["id"] == old["parent_id"])
    assert parent["role"] == "assistant" and parent["text"] == "Looked."
    assert new["on_branch"] and not old["on_branch"]
    assert tree["leaf_id"] in {n["id"] for n in tree["tree"] if n["on_branch"]}
    # The write's result (its diff) travels as its first line, as in `messages`.
    writes = [n for n in tree["tree"] if n["role"] == "tool" and n["tool_name"] == "write"]
    assert writes and all("\n" not in n["text"] for n in writes)

    answer = await post(ink, sid, "/rewind/undo")
    assert answer.status_code == 200, answer.text
    assert {"sum.py", "created.txt"} <= set(answer.json()["restored_files"])
    assert (workspace / "created.txt").read_text() == "made"
    assert "return 0" in (workspace / "sum.py").read_text()
    assert (workspace / "d" / "e" / "f").exists()

    # Back to the old branch by the tree: its messages again, the files left alone.
    answer = await post(ink, sid, "/tree/navigate", {"entry_id": old["id"]})
    assert answer.status_code == 200, answer.text
    moved = answer.json()
    assert moved["text"] == "change things" and moved["leaf_id"] == old["parent_id"]
    assert await users_shown(ink, sid) == ["look first"]
    assert (workspace / "created.txt").exists()


async def test_files_only_keeps_the_conversation(
    ink: InkServe, server: ScriptedServer, workspace: Path
) -> None:
    sid = await ink.new_session()
    server.push(tool_reply([("bash", {"command": "echo two > two.txt"})]), text_reply("Made."))
    events = await prompt(ink, sid, "make two")
    answer = await post(
        ink, sid, "/rewind", {"entry_id": entry_of(events, "make two"), "restore": "files"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["restored_files"] == ["two.txt"]
    assert not (workspace / "two.txt").exists()
    assert await users_shown(ink, sid) == ["make two"]


async def test_fork_opens_a_new_session_here_and_leaves_this_one(
    ink: InkServe, server: ScriptedServer
) -> None:
    sid = await ink.new_session()
    server.push(text_reply("A."), text_reply("B."))
    await prompt(ink, sid, "alpha")
    events = await prompt(ink, sid, "beta")
    answer = await post(ink, sid, "/fork", {"entry_id": entry_of(events, "beta")})
    assert answer.status_code == 201, answer.text
    forked = answer.json()
    assert forked["text"] == "beta" and forked["session_id"] != sid
    new = forked["session_id"]
    listing = (await ink.client.get("/api/sessions")).json()["sessions"]
    assert {s["id"] for s in listing if s["open"]} == {sid, new}
    assert await users_shown(ink, new) == ["alpha"]
    assert await users_shown(ink, sid) == ["alpha", "beta"]

    server.push(text_reply("C."))
    await prompt(ink, new, "gamma")
    assert user_texts(server.requests[-1]) == ["alpha", "gamma"]
    assert await users_shown(ink, sid) == ["alpha", "beta"]


async def test_going_back_while_a_run_goes_is_409_and_changes_nothing(
    ink: InkServe, server: ScriptedServer
) -> None:
    sid = await ink.new_session()
    server.push(text_reply("First."))
    entry = entry_of(await prompt(ink, sid, "first"), "first")
    gate = Gate()
    server.push(text_reply("Held answer", gate=gate))
    url = f"/api/sessions/{sid}/messages?wait=settled"
    async with ink.client.stream("POST", url, json={"text": "second"}) as stream:
        await wait_gate(gate)
        for rest, body in (
            ("/rewind", {"entry_id": entry, "restore": "both"}),
            ("/rewind/preview", {"entry_id": entry}),
            ("/rewind/undo", None),
            ("/tree/navigate", {"entry_id": entry}),
            ("/fork", {"entry_id": entry}),
        ):
            answer = await post(ink, sid, rest, body)
            assert answer.status_code == 409, (rest, answer.text)
            assert answer.json()["error"] == "busy"
            assert "in progress" in answer.json()["message"]
        # Reading is not refused.
        assert (await ink.client.get(f"/api/sessions/{sid}/tree")).status_code == 200
        gate.open()
        await read_sse(stream, settled, within=WITHIN)
    assert await users_shown(ink, sid) == ["first", "second"]
    listing = (await ink.client.get("/api/sessions")).json()["sessions"]
    assert [s["id"] for s in listing if s["open"]] == [sid]


async def test_bad_entries_and_bodies_get_clear_errors(
    ink: InkServe, server: ScriptedServer
) -> None:
    sid = await ink.new_session()
    server.push(text_reply("Hi."))
    entry = entry_of(await prompt(ink, sid, "hello"), "hello")

    for rest, body in (
        ("/rewind", {"entry_id": "nope", "restore": "both"}),
        ("/rewind/preview", {"entry_id": "nope"}),
        ("/tree/navigate", {"entry_id": "nope"}),
        ("/fork", {"entry_id": "nope"}),
    ):
        answer = await post(ink, sid, rest, body)
        assert answer.status_code == 404, (rest, answer.text)
        assert answer.json() == {"error": "not_found", "message": "no entry 'nope' in this session"}

    bad: list[Any] = [
        {"entry_id": entry, "restore": "all"},
        {"entry_id": entry},
        {"entry_id": 3, "restore": "both"},
        {"restore": "both"},
        ["not", "an", "object"],
    ]
    for wrong in bad:
        answer = await post(ink, sid, "/rewind", wrong)
        assert answer.status_code == 400, (wrong, answer.text)
        assert answer.json()["error"] == "bad_request"
    assert "restore" in (await post(ink, sid, "/rewind", {"entry_id": entry})).json()["message"]

    tree = await get(ink, sid, "/tree")
    assistant = next(n for n in tree["tree"] if n["role"] == "assistant")
    answer = await post(ink, sid, "/rewind", {"entry_id": assistant["id"], "restore": "both"})
    assert answer.status_code == 400 and "not one of the user's messages" in answer.text

    answer = await post(ink, sid, "/rewind/undo")
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"] == "refused" and "no file restore" in answer.json()["message"]

    answer = await ink.client.get("/api/sessions/no-such-session/tree")
    assert answer.status_code == 404 and answer.json()["error"] == "not_found"
    assert await users_shown(ink, sid) == ["hello"]


async def test_texts_leave_masked(ink: InkServe, server: ScriptedServer) -> None:
    sid = await ink.new_session()
    server.push(text_reply(f"Key {API_KEY} noted."))
    text = f"use the key {API_KEY}"
    entry = entry_of(await prompt(ink, sid, text), "use the key ***")
    raw = [
        (await ink.client.get(f"/api/sessions/{sid}/tree")).text,
        (await ink.client.get(f"/api/sessions/{sid}/user-messages")).text,
        (await post(ink, sid, "/rewind/preview", {"entry_id": entry})).text,
        (await post(ink, sid, "/rewind", {"entry_id": entry, "restore": "conversation"})).text,
    ]
    for shown in raw:
        assert API_KEY not in shown and "***" in shown, shown


async def test_without_the_token_or_from_another_origin_nothing_happens(
    ink: InkServe, server: ScriptedServer
) -> None:
    sid = await ink.new_session()
    server.push(text_reply("Hi."))
    entry = entry_of(await prompt(ink, sid, "hello"), "hello")
    base = str(ink.client.base_url).rstrip("/")
    token = ink.client.headers["Authorization"].removeprefix("Bearer ")
    routes = [
        ("GET", "/tree", None),
        ("GET", "/user-messages", None),
        ("POST", "/rewind/preview", {"entry_id": entry}),
        ("POST", "/rewind", {"entry_id": entry, "restore": "both"}),
        ("POST", "/rewind/undo", {}),
        ("POST", "/tree/navigate", {"entry_id": entry}),
        ("POST", "/fork", {"entry_id": entry}),
    ]
    async with httpx.AsyncClient(base_url=base, timeout=10) as stranger:
        for method, rest, body in routes:
            answer = await stranger.request(method, f"/api/sessions/{sid}{rest}", json=body)
            assert answer.status_code == 401, (rest, answer.text)
            assert answer.json()["error"] == "unauthorized"
    evil = {"Origin": "http://evil.example"}
    async with httpx.AsyncClient(
        base_url=base, cookies={"ink_token": token}, headers=evil, timeout=10
    ) as browser:
        for method, rest, body in routes:
            if method != "POST":
                continue
            answer = await browser.post(f"/api/sessions/{sid}{rest}", json=body)
            assert answer.status_code == 403, (rest, answer.text)
            assert answer.json()["error"] == "cross_origin"
    plain = await ink.client.post(
        f"/api/sessions/{sid}/rewind",
        content=b'{"entry_id": "x", "restore": "both"}',
        headers={"Content-Type": "text/plain"},
    )
    assert plain.status_code == 415
    assert await users_shown(ink, sid) == ["hello"]
    listing = (await ink.client.get("/api/sessions")).json()["sessions"]
    assert [s["id"] for s in listing if s["open"]] == [sid]
