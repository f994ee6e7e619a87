"""Requests from elsewhere are refused by `ink serve` (serve/guard.py), over HTTP against
a real uvicorn: a change made with the cookie alone needs the page's own Origin (or
`Sec-Fetch-Site: same-origin`), a body must be JSON and at most 1 MiB, the Host must be
the address served (DNS rebinding), and every answer carries the headers that keep the
page out of frames and its scripts its own. Bearer clients work as before."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from ink_tui.serve.guard import CSP, MAX_BODY
from tests.scripted_server import ScriptedServer
from tests.serve_helpers import Served, isolated_store, serve


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_store(tmp_path, monkeypatch)
    yield home


def cookie_client(srv: Served, **headers: str) -> httpx.AsyncClient:
    """A client holding only the cookie, as a browser does once the link was opened."""
    return httpx.AsyncClient(
        base_url=srv.base, cookies={"ink_token": srv.token}, headers=headers, timeout=10
    )


async def session_count(srv: Served) -> int:
    listing = (await srv.client.get("/api/sessions")).json()["sessions"]
    return len(listing)


async def test_every_answer_carries_the_security_headers(
    server: ScriptedServer, workspace: Path
) -> None:
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        async with httpx.AsyncClient(base_url=srv.base, timeout=10) as stranger:
            answers = [
                await srv.client.get(f"/?token={srv.token}"),
                await srv.client.get("/static/app.js"),
                await srv.client.get(f"/api/sessions/{sid}"),
                await srv.client.get("/api/no-such-route"),
                await stranger.get("/api/sessions"),  # 401
                await stranger.get("/", headers={"Host": "evil.example"}),  # 421
            ]
    assert [a.status_code for a in answers] == [200, 200, 200, 404, 401, 421]
    for response in answers:
        headers = response.headers
        assert headers["content-security-policy"] == CSP, response.url
        assert headers["x-frame-options"] == "DENY"
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in CSP and "script-src 'self'" in CSP


async def test_a_host_that_is_not_the_address_served_is_refused(
    server: ScriptedServer, workspace: Path
) -> None:
    async with serve(server, workspace) as srv:
        port = int(urlsplit(srv.base).port or 0)
        answers = {}
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            f"[::1]:{port}",
            f"LocalHost:{port}",
            "evil.example",
            f"evil.example:{port}",
            f"127.0.0.1:{port + 1}",
            "127.0.0.1",
        ):
            answer = await srv.client.get("/api/sessions", headers={"Host": host})
            answers[host] = answer.status_code
        rebound = await srv.client.post(
            "/api/sessions", json={}, headers={"Host": f"rebind.example:{port}"}
        )
        count = await session_count(srv)

    assert answers == {
        f"127.0.0.1:{port}": 200,
        f"localhost:{port}": 200,
        f"[::1]:{port}": 200,
        f"LocalHost:{port}": 200,
        "evil.example": 421,
        f"evil.example:{port}": 421,
        f"127.0.0.1:{port + 1}": 421,
        "127.0.0.1": 421,
    }
    assert rebound.status_code == 421 and rebound.json()["error"] == "wrong_host"
    assert count == 0  # the rebinding page's POST opened nothing, even with the token


async def test_a_cookie_borne_change_needs_the_pages_own_origin(
    server: ScriptedServer, workspace: Path
) -> None:
    async with serve(server, workspace) as srv:
        port = int(urlsplit(srv.base).port or 0)
        refused = []
        for headers in (
            {},  # no Origin, no Sec-Fetch-Site: not known to come from the page
            {"Origin": f"http://127.0.0.1:{port + 1}"},  # another port: same site
            {"Origin": f"http://localhost:{port + 1}"},
            {"Origin": "http://evil.example"},
            {"Origin": "null"},
            {"Origin": f"https://127.0.0.1:{port}"},  # another scheme
            {"Sec-Fetch-Site": "same-site"},
            {"Sec-Fetch-Site": "cross-site"},
            {"Origin": "http://evil.example", "Sec-Fetch-Site": "same-origin"},
        ):
            async with cookie_client(srv, **headers) as browser:
                answer = await browser.post("/api/sessions", json={})
                refused.append((answer.status_code, answer.json()["error"]))
                # Reading is not refused: a cross-origin page cannot read the answer.
                assert (await browser.get("/api/sessions")).status_code == 200
        assert set(refused) == {(403, "cross_origin")}
        assert await session_count(srv) == 0

        for headers in (
            {"Origin": srv.base},
            {"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"},
            {"Sec-Fetch-Site": "same-origin"},
        ):
            async with cookie_client(srv, **headers) as browser:
                opened = await browser.post("/api/sessions", json={})
                assert opened.status_code == 201, (headers, opened.text)
        sid = opened.json()["session"]["session_id"]
        # DELETE and PATCH are changes too.
        async with cookie_client(srv, Origin="http://evil.example") as browser:
            assert (await browser.delete(f"/api/sessions/{sid}/queue")).status_code == 403
            assert (await browser.delete(f"/api/sessions/{sid}")).status_code == 403
            patched = await browser.patch(f"/api/sessions/{sid}/queue/1", json={"text": "x"})
            assert patched.status_code == 403
        assert sid in [s["id"] for s in (await srv.client.get("/api/sessions")).json()["sessions"]]

        # A program with the token is not asked where it comes from.
        bearer = await srv.client.post(
            "/api/sessions", json={}, headers={"Origin": "http://evil.example"}
        )
        assert bearer.status_code == 201


async def test_a_body_must_be_json_and_at_most_a_mebibyte(
    server: ScriptedServer, workspace: Path
) -> None:
    async with serve(server, workspace) as srv:
        sid = await srv.new_session()
        url = f"/api/sessions/{sid}/messages"
        for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {"Content-Type": content_type} if content_type else {}
            answer = await srv.client.post(url, content=b'{"text": "hi"}', headers=headers)
            assert answer.status_code == 415, content_type
            assert answer.json()["error"] == "unsupported_media_type"
        async with cookie_client(srv, Origin=srv.base) as browser:
            plain = await browser.post(
                url, content=b'{"text": "hi"}', headers={"Content-Type": "text/plain"}
            )
            assert plain.status_code == 415

        big = {"text": "x" * (2 * MAX_BODY)}
        too_large = await srv.client.post(url, json=big)
        assert too_large.status_code == 413 and too_large.json()["error"] == "too_large"

        async def chunks() -> AsyncIterator[bytes]:
            # No Content-Length: counted as it is read.
            yield b'{"text": "'
            for _ in range(40):
                yield b"y" * 65536
            yield b'"}'

        chunked = await srv.client.post(
            url, content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert chunked.status_code == 413
        state = await srv.state(sid)
        assert state["message_count"] == 0 and not server.requests

        # Just under the limit, with a charset: taken (unknown fields are ignored).
        fits = await srv.client.post(
            "/api/sessions",
            content=b'{"padding": "' + b"a" * (MAX_BODY - 100) + b'"}',
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
        assert fits.status_code == 201, fits.text
        # Without a body no type is needed (the page's Stop).
        assert (await srv.client.post(f"/api/sessions/{sid}/abort")).status_code == 200


async def test_allow_remote_drops_the_host_check_but_not_the_origin_check(
    server: ScriptedServer, workspace: Path
) -> None:
    async with serve(server, workspace, allow_remote=True) as srv:
        remote = {"Host": "ink.example.com"}
        assert (await srv.client.get("/api/sessions", headers=remote)).status_code == 200
        async with cookie_client(srv, **remote) as browser:
            own = await browser.post(
                "/api/sessions", json={}, headers={"Origin": "https://ink.example.com"}
            )
            other = await browser.post(
                "/api/sessions", json={}, headers={"Origin": "https://evil.example"}
            )
    assert own.status_code == 201 and other.status_code == 403


async def test_a_public_origin_is_the_pages_address_behind_a_proxy(
    server: ScriptedServer, workspace: Path
) -> None:
    origin = "https://ink.example.com"
    async with serve(server, workspace, public_origins=(origin,)) as srv:
        proxied = {"Host": "ink.example.com"}
        assert (await srv.client.get("/api/sessions", headers=proxied)).status_code == 200
        # A proxy that passes its own Host upstream: the Origin still names the page.
        async with cookie_client(srv, Origin=origin) as browser:
            assert (await browser.post("/api/sessions", json={})).status_code == 201
        async with cookie_client(srv, Origin="https://other.example.com") as browser:
            assert (await browser.post("/api/sessions", json={})).status_code == 403
        other = await srv.client.get("/api/sessions", headers={"Host": "other.example.com"})
        assert other.status_code == 421
