"""A JSON request body sent piece by piece, never held whole.

`httpx`'s `json=` turns the body into one `str` and then into `bytes` while the `str`
is still alive: for a long conversation (a 50 MB session resumed) that is two more
copies of the whole history at once, on top of the history itself, and the bytes stay
until the reply ends. `JsonBody` gives the same bytes (`json.dumps` with
`ensure_ascii=False` and compact separators, as httpx writes them) as an async iterable
for `content=`: each element of a top-level list (each message) is encoded on its own
as the request is sent, in writes of about `CHUNK_BYTES`. `headers()` holds its
`Content-Length` (counted by encoding once, without keeping anything), so the request is
framed as before and no server has to take a chunked upload.

It can be sent any number of times (each `async for` encodes afresh): a retry sends
the same body again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

# Bytes gathered into one write to the socket.
CHUNK_BYTES = 64 * 1024

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class JsonBody:
    """`client.build_request(..., content=body, headers={..., **body.headers()})`."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self._obj = obj
        self._length: int | None = None

    def headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", "Content-Length": str(len(self))}

    def __len__(self) -> int:
        if self._length is None:
            self._length = sum(_utf8_length(text) for text in self._texts())
        return self._length

    def __bytes__(self) -> bytes:
        return b"".join(self.chunks())

    def chunks(self) -> Iterator[bytes]:
        """The body in pieces of about `CHUNK_BYTES` (one big element may be more)."""
        batch: list[bytes] = []
        size = 0
        for text in self._texts():
            piece = text.encode("utf-8")
            batch.append(piece)
            size += len(piece)
            if size >= CHUNK_BYTES:
                yield b"".join(batch)
                batch, size = [], 0
        if batch:
            yield b"".join(batch)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks():
            yield chunk

    def _texts(self) -> Iterator[str]:
        """The body's JSON text in order, a top-level list one element at a time."""
        yield "{"
        for index, (key, value) in enumerate(self._obj.items()):
            yield ("," if index else "") + _encode(key) + ":"
            if isinstance(value, list):
                yield "["
                for position, item in enumerate(value):
                    yield ("," if position else "") + _encode(item)
                yield "]"
            else:
                yield _encode(value)
        yield "}"


def _utf8_length(text: str) -> int:
    # ASCII (most of a conversation) is one byte a character: no copy to count it.
    return len(text) if text.isascii() else len(text.encode("utf-8"))
