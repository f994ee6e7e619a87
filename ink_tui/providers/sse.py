"""An incremental Server-Sent Events parser: bytes in, events out, no I/O.

Network chunks split the stream anywhere (inside a line, between `\\r` and `\\n`, inside a
UTF-8 character), so the parser keeps whatever it cannot finish yet and emits an event
only once its blank line has arrived. It follows the WHATWG "event stream" rules, with one
deliberate difference: an event left without its closing blank line when the stream ends
is still delivered by `close()`, because real servers do end that way and dropping the
last chunk would lose the finish reason or the usage.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

# Any of the three line endings the spec allows. A lone "\r" at the very end of the buffer
# is held back because the "\n" of a "\r\n" pair may be in the next network chunk.
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    # The last `id:` seen so far in the stream (ids carry over between events).
    id: str | None = None


class SSEParser:
    """Feed chunks with `feed()`, then call `close()` once the stream has ended."""

    def __init__(self) -> None:
        # "replace" rather than strict: one bad byte should not sink a whole reply.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._at_start = True
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        # The server's `retry:` advice in milliseconds; kept for callers, unused here.
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes | str) -> list[SSEEvent]:
        """Parse one network chunk; returns the events it completed (often none)."""
        text = self._decoder.decode(chunk) if isinstance(chunk, bytes) else chunk
        return self._consume(text, final=False)

    def close(self) -> list[SSEEvent]:
        """End of stream: flush a final line and event that had no terminator."""
        return self._consume(self._decoder.decode(b"", final=True), final=True)

    def _consume(self, text: str, *, final: bool) -> list[SSEEvent]:
        if self._at_start and text:
            self._at_start = False
            text = text.removeprefix("\ufeff")  # the spec allows one leading BOM
        buffer = self._buffer + text
        events: list[SSEEvent] = []
        start = 0
        for match in _LINE_END.finditer(buffer):
            if match.group() == "\r" and match.end() == len(buffer) and not final:
                break
            self._line(buffer[start : match.start()], events)
            start = match.end()
        self._buffer = buffer[start:]
        if final:
            if self._buffer:
                self._line(self._buffer, events)
                self._buffer = ""
            self._dispatch(events)
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return  # a comment: servers send these as keep-alives
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]  # only one space is part of the syntax
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        # Any other field name is ignored, as the spec requires.

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent("\n".join(self._data), self._event or "message", self._last_id))
        self._data = []
        self._event = ""
