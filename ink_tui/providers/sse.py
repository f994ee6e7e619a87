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
from typing import NamedTuple

# Any of the three line endings the spec allows. Only needed once a "\r" shows up: nearly
# every server ends lines with a bare "\n", which `str.split` handles far faster.
_LINE_END = re.compile(r"\r\n|\r|\n")


# A named tuple rather than a frozen dataclass: one is made per event, thousands a
# second, and a tuple is made several times faster than a frozen instance's fields set.
class SSEEvent(NamedTuple):
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
        buffer = self._buffer + text if self._buffer else text
        # A lone "\r" at the very end is held back: the "\n" of its "\r\n" pair may be
        # in the next network chunk, and splitting now would make that "\n" a blank line.
        held = "\r" if not final and buffer.endswith("\r") else ""
        if held:
            buffer = buffer[:-1]
        lines = _LINE_END.split(buffer) if "\r" in buffer else buffer.split("\n")
        # The last piece is a line still waiting for its end (often "").
        rest = lines.pop()
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            # One network read carries hundreds of events, so the two lines nearly every
            # event is made of (`data: ...` and the blank one) skip the general path.
            if not line:
                if data:
                    events.append(self._event_of(data))
                    data = self._data = []
                self._event = ""
            elif line.startswith("data: "):
                data.append(line[6:])
            else:
                self._line(line, events)
                data = self._data  # `_line` may have dispatched and replaced the list
        self._buffer = rest + held
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
            events.append(self._event_of(self._data))
            self._data = []
        self._event = ""

    def _event_of(self, data: list[str]) -> SSEEvent:
        joined = data[0] if len(data) == 1 else "\n".join(data)
        return SSEEvent(joined, self._event or "message", self._last_id)
