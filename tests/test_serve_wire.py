"""What a client that does not speak HTTP well gets from the real `ink serve`.

`ink serve` runs uvicorn on httptools (llhttp, in C) where that is installed, on h11
otherwise (`serve/main.py`, `http_implementation`). Over a raw socket: a request that is
not HTTP, one that says its body is both chunked and of a length (the shape of request
smuggling) and one whose chunk size is not a number. On httptools each is answered 400
by the parser, before the app sees it; h11 reads the chunked body of the second (the
length is ignored, as RFC 9112 allows) and the app refuses it for want of a token. The
server then answers a well-formed request as before and nothing was opened.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ink_tui.serve.main import http_implementation
from tests.scripted_server import ScriptedServer
from tests.serve_process import InkServe, ink_serve

WITHIN = 30.0

# `{host}` is the server's own address: a request the parser lets through reaches the
# app, not the guard's check of the Host header.
BAD_REQUESTS = {
    "not http": "HELLO THERE\r\n\r\n",
    "chunked and a length": (
        "POST /api/sessions HTTP/1.1\r\nHost: {host}\r\nContent-Length: 4\r\n"
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    ),
    "a chunk size that is not a number": (
        "POST /api/sessions HTTP/1.1\r\nHost: {host}\r\n"
        "Transfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n"
    ),
}
# What h11 answers where it reads the request otherwise (see the module's doc).
H11_ANSWERS = {"chunked and a length": b"HTTP/1.1 401"}


def test_the_c_parser_is_used_where_it_is_installed() -> None:
    installed = importlib.util.find_spec("httptools") is not None
    assert http_implementation() == ("httptools" if installed else "h11")


async def _raw_exchange(ink: InkServe, request: str) -> bytes:
    """Send `request` on a fresh connection; everything read until the server closes."""
    address = urlsplit(str(ink.client.base_url))
    assert address.hostname is not None and address.port is not None
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    try:
        writer.write(request.format(host=address.netloc).encode())
        await writer.drain()
        return await asyncio.wait_for(reader.read(), WITHIN)
    finally:
        writer.close()


@pytest.mark.parametrize("kind", sorted(BAD_REQUESTS))
async def test_a_request_that_is_not_good_http_is_answered_400_and_the_server_goes_on(
    kind: str, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    async with ink_serve(server, workspace, tmp_path / "home") as ink:
        answer = await _raw_exchange(ink, BAD_REQUESTS[kind])
        status = answer.split(b"\r\n", 1)[0]
        expected = b"HTTP/1.1 400"
        if http_implementation() == "h11":
            expected = H11_ANSWERS.get(kind, expected)
        assert status.startswith(expected), answer[:200]
        # Nothing was opened by it, and a well-formed request is served as before.
        listed = await ink.client.get("/api/sessions")
        assert listed.status_code == 200
        assert listed.json()["sessions"] == []
        assert await ink.new_session()
        if http_implementation() == "httptools":
            # (h11 hands the app a body it then fails to read, and uvicorn logs that.)
            assert "Traceback" not in ink.stderr_text()
