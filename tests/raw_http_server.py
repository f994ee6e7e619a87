"""A loopback HTTP server that writes the bytes a test gives it, as they are: for bodies
no real server would send (malformed, cut off, split at any byte)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

CHUNKED_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def chunked(pieces: list[bytes], trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces if piece)
    return body + b"0\r\n" + trailer + b"\r\n"


async def serve(answer: Answer) -> tuple[asyncio.Server, str]:
    """A server on a free port running `answer` per connection, and its base URL."""
    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


def writing(wire: bytes, *, step: int = 0, hang_up: bool = False) -> Answer:
    """Answers every request on a connection with `wire`: whole, or `step` bytes a write
    (each given a moment to be read before the next, so sizes, data and ends come split);
    then closes the connection, with `hang_up`."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        size = step or len(wire)
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                for start in range(0, len(wire), size):
                    writer.write(wire[start : start + size])
                    await writer.drain()
                    if step:
                        await asyncio.sleep(0.001)
                if hang_up:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return answer
