"""`ink serve`'s access token: every route answers 401 without it; the link's `?token=`
sets an HttpOnly, SameSite=Strict cookie that then suffices (the page's EventSource
cannot send headers)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.scripted_server import ScriptedServer
from tests.serve_helpers import isolated_store, read_sse, serve


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
    yield home


def routes(sid: str) -> list[tuple[str, str]]:
    return [
        ("GET", "/"),
        ("GET", "/static/app.js"),
        ("GET", "/static/no-such-file.css"),
        ("GET", "/api/sessions"),
        ("POST", "/api/sessions"),
        ("GET", f"/api/sessions/{sid}"),
        ("DELETE", f"/api/sessions/{sid}"),
        ("POST", f"/api/sessions/{sid}/messages"),
        ("POST", f"/api/sessions/{sid}/abort"),
        ("GET", f"/api/sessions/{sid}/queue"),
        ("DELETE", f"/api/sessions/{sid}/queue"),
        ("PATCH", f"/api/sessions/{sid}/queue/1"),
        ("DELETE", f"/api/sessions/{sid}/queue/1"),
        ("GET", f"/api/sessions/{sid}/events"),
        ("GET", "/api/no-such-route"),
    ]


async def test_every_route_needs_the_token(server: ScriptedServer, workspace: Path) -> None:
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        async with httpx.AsyncClient(base_url=srv.base, timeout=5) as stranger:
            for method, path in routes(sid):
                for headers in ({}, {"Authorization": "Bearer wrong-token"}):
                    answer = await stranger.request(
                        method, path, json={"text": "hi"}, headers=headers
                    )
                    assert answer.status_code == 401, (method, path, answer.text)
                    assert answer.json()["error"] == "unauthorized"
                wrong = await stranger.request(method, f"{path}?token=wrong", json={})
                assert wrong.status_code == 401
                assert "set-cookie" not in wrong.headers
            stranger.cookies.set("ink_token", "wrong")
            assert (await stranger.get("/api/sessions")).status_code == 401
        # Nothing reached the session: no run, no message.
        state = await srv.state(sid)
    assert state["message_count"] == 0 and not server.requests


async def test_the_links_token_sets_a_cookie_that_then_suffices(
    server: ScriptedServer, workspace: Path
) -> None:
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        async with httpx.AsyncClient(base_url=srv.base, timeout=5) as browser:
            page = await browser.get(f"/?token={srv.token}")
            assert page.status_code == 200
            cookie = page.headers["set-cookie"]
            assert cookie.startswith(f"ink_token={srv.token}")
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
            assert browser.cookies.get("ink_token") == srv.token
            # From now on the cookie alone: the API, the assets, the event stream.
            assert (await browser.get("/api/sessions")).status_code == 200
            assert (await browser.get("/static/app.js")).status_code == 200
            async with browser.stream(
                "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
            ) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                # A change made with the cookie alone is taken from the page itself (a
                # browser sends its Origin); see test_serve_guard.py for the others.
                own = {"Origin": srv.base}
                cleared = await browser.delete(f"/api/sessions/{sid}/queue", headers=own)
                assert cleared.status_code == 200
            bearer = await browser.get(
                "/api/sessions", headers={"Authorization": f"Bearer {srv.token}"}
            )
            assert bearer.status_code == 200


async def test_an_event_stream_opened_with_the_cookie_carries_events(
    server: ScriptedServer, workspace: Path
) -> None:
    from tests.scripted_server import text_reply

    server.push(text_reply("hello"))
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        async with (
            httpx.AsyncClient(
                base_url=srv.base, timeout=5, cookies={"ink_token": srv.token}
            ) as browser,
            browser.stream(
                "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "0"}
            ) as stream,
        ):
            await srv.client.post(f"/api/sessions/{sid}/messages", json={"text": "hi"})
            events = await read_sse(stream, lambda es: es[-1].event == "agent_settled")
    assert events[0].event == "state_change" and events[0].id == 1
