"""Event `seq` never repeats for a session id (#20 item 8), through the real processes.

`ink serve`: a session closed (DELETE) and resumed, the server stopped and started
again, and the server killed (nothing closed) each go on numbering after the last seq
any client was sent; a client whose Last-Event-ID is from before what the server can
replay gets `replay_gap` first (which seqs it will not get, where to reload), then the
live events. `ink --mode rpc`: switching back to a session goes on after its last seq.
"""

from __future__ import annotations

import os
from pathlib import Path

from ink_tui.rpc_client import RpcClient
from tests.scripted_server import ScriptedServer, text_reply
from tests.serve_helpers import SseEvent, covered, read_sse, settled
from tests.serve_process import ROOT, InkServe, ink_serve

WITHIN = 60.0


async def _prompt(ink: InkServe, sid: str, text: str) -> list[SseEvent]:
    """The events of one prompt, sent with `?wait=settled` (it streams them)."""
    url = f"/api/sessions/{sid}/messages?wait=settled"
    async with ink.client.stream("POST", url, json={"text": text}) as stream:
        assert stream.status_code == 200
        return await read_sse(stream, settled, within=WITHIN)


async def _reconnect(ink: InkServe, sid: str, last_event_id: int, text: str) -> list[SseEvent]:
    """A client reconnecting with `last_event_id`, while a prompt runs to its settle."""
    url = f"/api/sessions/{sid}/events"
    headers = {"Last-Event-ID": str(last_event_id)}
    async with ink.client.stream("GET", url, headers=headers) as stream:
        assert stream.status_code == 200
        sent = await ink.client.post(f"/api/sessions/{sid}/messages", json={"text": text})
        assert sent.status_code == 202, sent.text
        return await read_sse(stream, settled, within=WITHIN)


def _assert_gap(events: list[SseEvent], sid: str, after: int, first: int, last: int) -> None:
    gap = events[0]
    assert gap.event == "replay_gap", [e.event for e in events[:3]]
    assert gap.data["last_event_id"] == after
    assert (gap.data["missing_first"], gap.data["missing_last"]) == (first, last)
    assert gap.data["reload"] == f"/api/sessions/{sid}"
    assert gap.id == gap.data["last_seq"] == last
    # Then only live events, each newer than the gap.
    assert all(e.event != "replay_gap" and e.data["seq"] > last for e in events[1:])


async def test_serve_seq_goes_on_across_reopen_restart_and_kill(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    server.push(*(text_reply(f"answer {n}") for n in range(1, 6)))
    async with ink_serve(server, workspace, home) as ink:
        sid = await ink.new_session()
        first = await _prompt(ink, sid, "one")
        seen = first[-1].id
        assert seen is not None and covered(first) == list(range(1, seen + 1))

        # Closed and resumed: the state says where it is, a client there misses nothing.
        closed = await ink.client.delete(f"/api/sessions/{sid}")
        assert closed.status_code == 200, closed.text
        assert (await ink.resume(sid))["last_seq"] == seen
        second = await _reconnect(ink, sid, seen, "two")
        assert second[0].event != "replay_gap"
        assert covered(second)[0] == seen + 1
        assert covered(second) == sorted(set(covered(second)))
        after_reopen = second[-1].id
        assert after_reopen is not None

        # A client from before the reopen: its events went with the closed session.
        stale = await _reconnect(ink, sid, 2, "three")
        _assert_gap(stale, sid, 2, 3, after_reopen)
        assert stale[0].data["oldest_seq"] == seen + 1
        before_stop = (await ink.state(sid))["last_seq"]
        assert before_stop == stale[-1].id
        assert await ink.stop() == 143

    async with ink_serve(server, workspace, home) as ink:
        assert (await ink.resume(sid))["last_seq"] == before_stop
        # A client from the stopped server, behind by one prompt.
        behind = await _reconnect(ink, sid, after_reopen, "four")
        _assert_gap(behind, sid, after_reopen, after_reopen + 1, before_stop)
        assert covered(behind[1:])[0] == before_stop + 1
        before_kill = behind[-1].id
        assert before_kill is not None
        await ink.kill()

    async with ink_serve(server, workspace, home) as ink:
        # Killed, it could not say where it stopped: it goes on past every seq it may
        # have sent, and a client that had them all is told of the gap.
        reopened = (await ink.resume(sid))["last_seq"]
        assert reopened > before_kill
        after_kill = await _reconnect(ink, sid, before_kill, "five")
        _assert_gap(after_kill, sid, before_kill, before_kill + 1, reopened)
        assert min(covered(after_kill[1:])) == reopened + 1
        assert await ink.stop() == 143

    # Every seq any client was sent, once.
    shown = [
        seq for events in (first, second, stale, behind, after_kill) for seq in covered(events)
    ]
    assert shown == sorted(set(shown))


async def test_rpc_seq_goes_on_when_switching_back_and_after_a_restart(
    server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INK_", "OPENAI_", "XDG_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        # This tree's ink, not whichever one is installed.
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    )
    args = ["--base-url", server.base_url, "--model", "scripted-model", "--api-key", "k"]
    server.push(*(text_reply(f"answer {n}") for n in range(1, 5)))

    def seqs_of(ink: RpcClient, sid: str, mark: int = 0) -> list[int]:
        return [e["seq"] for e in ink.seen[mark:] if e.get("session_id") == sid]

    async with RpcClient.spawn(args, cwd=workspace, env=env) as ink:
        await ink.command("prompt", message="first session")
        await ink.wait_settled()
        first = (await ink.command("get_state"))["session_id"]
        before = seqs_of(ink, first)
        await ink.command("new_session")
        await ink.command("prompt", message="another session")
        await ink.wait_settled()
        await ink.command("switch_session", session_id=first)
        mark = len(ink.seen)
        await ink.command("prompt", message="back again")
        await ink.wait_settled()
        back = seqs_of(ink, first, mark)
    assert back and min(back) == max(before) + 1, (before, back)

    async with RpcClient.spawn([*args, "--resume", first], cwd=workspace, env=env) as ink:
        assert (await ink.command("get_state"))["session_id"] == first
        await ink.command("prompt", message="after a restart")
        await ink.wait_settled()
        restarted = seqs_of(ink, first)
    assert restarted and min(restarted) == max(back) + 1, (back, restarted)
    everything = before + back + restarted
    assert everything == sorted(set(everything))
