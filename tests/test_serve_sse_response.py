"""`ink serve`'s SSE response (serve/sse_response.py), driven as ASGI directly: its
headers, each chunk as one message in order, the end, a keep-alive after a quiet
stretch, a hang-up closing the body at once, and HEAD."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from ink_tui.serve.sse_response import PING, SSEResponse


class Client:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body"]


def scope(method: str = "GET") -> dict[str, Any]:
    return {"type": "http", "method": method}


async def test_chunks_go_out_in_order_then_the_end() -> None:
    async def body() -> AsyncGenerator[bytes, None]:
        yield b"id: 1\nevent: a\ndata: {}\n\n"
        yield b"id: 2\nevent: b\ndata: {}\n\n"

    client = Client()
    await SSEResponse(body(), ping_s=15)(scope(), client.receive, client.send)
    start = client.sent[0]
    assert start["status"] == 200
    headers = dict(start["headers"])
    assert headers[b"content-type"] == b"text/event-stream; charset=utf-8"
    assert headers[b"cache-control"] == b"no-store"
    assert headers[b"x-accel-buffering"] == b"no"
    assert client.bodies() == [
        b"id: 1\nevent: a\ndata: {}\n\n",
        b"id: 2\nevent: b\ndata: {}\n\n",
        b"",
    ]
    assert client.sent[-1]["more_body"] is False


async def test_a_quiet_stream_gets_a_keep_alive_comment() -> None:
    release = asyncio.Event()

    async def body() -> AsyncGenerator[bytes, None]:
        await release.wait()
        yield b"id: 1\nevent: a\ndata: {}\n\n"

    client = Client()
    task = asyncio.ensure_future(
        SSEResponse(body(), ping_s=0.1)(scope(), client.receive, client.send)
    )
    await asyncio.sleep(0.35)
    release.set()
    await asyncio.wait_for(task, 5)
    bodies = client.bodies()
    assert bodies[0] == PING and 2 <= bodies.count(PING) <= 4
    assert bodies[-2:] == [b"id: 1\nevent: a\ndata: {}\n\n", b""]


async def test_a_hang_up_closes_the_body_at_once_and_sends_nothing_more() -> None:
    closed = asyncio.Event()

    async def body() -> AsyncGenerator[bytes, None]:
        try:
            yield b"first\n\n"
            await asyncio.Event().wait()  # a stream with nothing more to say
            yield b"never\n\n"
        finally:
            closed.set()

    client = Client()
    task = asyncio.ensure_future(
        SSEResponse(body(), ping_s=15)(scope(), client.receive, client.send)
    )
    await asyncio.sleep(0.05)
    client.gone.set()
    await asyncio.wait_for(task, 5)
    assert closed.is_set()
    assert client.bodies() == [b"first\n\n"]


async def test_head_gets_the_headers_and_an_empty_body() -> None:
    started = False

    async def body() -> AsyncGenerator[bytes, None]:
        nonlocal started
        started = True
        yield b"never\n\n"

    client = Client()
    await SSEResponse(body(), ping_s=15)(scope("HEAD"), client.receive, client.send)
    assert client.sent[0]["status"] == 200
    assert client.bodies() == [b""]
    assert not started


async def test_an_error_of_the_body_reaches_the_server() -> None:
    async def body() -> AsyncGenerator[bytes, None]:
        yield b"first\n\n"
        raise RuntimeError("broken")

    client = Client()
    with pytest.raises(RuntimeError, match="broken"):
        await SSEResponse(body(), ping_s=15)(scope(), client.receive, client.send)
