"""RPC mode's output: protocol lines to stdout, written from a thread of their own.

What it promises (docs/rpc.md, "Output"):

- Every line whole: a short `write(2)` (a signal arrived while the pipe was full), one
  interrupted before it wrote anything (EINTR) and one refused for now (EAGAIN: a
  non-blocking pipe) are carried on from the first byte not written.
- Strict JSON: a float that is not finite goes out as a string, as
  `core/strict_json.dumps` writes it; no line ever holds `NaN` or `Infinity`.
- It never blocks the run: `send` only queues, the thread writes. While the reader is
  behind (`BEHIND_BYTES` not yet taken), consecutive text/thinking deltas of one run
  and kind are merged into one `message_update` (its `seq` the last one's, `seq_first`
  the first one's). Past `DELTA_LIMIT_BYTES` waiting, further deltas are not kept: one
  `output_dropped` line in their place names their seqs (`message_end` and
  `get_messages` hold the whole text). Responses and every other event are never
  merged or dropped.
- Few writes while streaming: after a write, the next waits `gap` seconds, gathering
  what came meanwhile; a line after a quiet moment goes out at once.
"""

from __future__ import annotations

import json
import logging
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ink_tui.control.public_event_types import PROTOCOL_VERSION
from ink_tui.core import strict_json

log = logging.getLogger(__name__)

# While events stream, at most one write per this many seconds: each write to the pipe
# wakes the reader, which costs both processes far more than the line itself.
WRITE_GAP_S = 0.001
# The reader is behind once this much waits (a pipe's buffer is 64 KiB): deltas merge.
BEHIND_BYTES = 256 * 1024
# Deltas stop being kept once this much waits: the reader is not coming back soon.
DELTA_LIMIT_BYTES = 16 * 1024 * 1024
# One write takes at most about this much (a backlog is not copied whole at once).
_BATCH_BYTES = 1 << 20
# A merged delta's cost besides its text: the envelope it is written with.
_DELTA_OVERHEAD = 160

# One encoder for every line (`json.dumps` with options builds one per call); strict:
# a non-finite float raises, and the line is written again with those as strings.
_strict = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False
).encode
_ascii = json.JSONEncoder(separators=(",", ":"), default=str, allow_nan=False).encode


class Writable(Protocol):
    def write(self, data: memoryview, /) -> int | None: ...


def encode_line(obj: Mapping[str, Any]) -> bytes:
    """One protocol line (with its newline), strict JSON whatever `obj` holds."""
    try:
        try:
            text = _strict(obj)
        except ValueError as error:
            if "Out of range float" not in str(error):
                raise
            text = _strict(strict_json.finite(obj))
        try:
            return (text + "\n").encode()
        except UnicodeEncodeError:
            # A lone surrogate (bytes decoded with surrogateescape): escaped, not lost.
            return (_ascii(strict_json.finite(obj)) + "\n").encode()
    except (ValueError, TypeError, RecursionError) as error:
        return (_strict(_unwritable(obj, error)) + "\n").encode()


def _unwritable(obj: Mapping[str, Any], error: BaseException) -> dict[str, Any]:
    """What can be said of a line that is not JSON at all (a cycle, absurd depth)."""
    kept = {
        key: obj[key]
        for key in ("type", "v", "session_id", "seq", "run_id", "command", "id")
        if key in obj and (obj[key] is None or isinstance(obj[key], str | int))
    }
    if kept.get("type") == "response":
        kept["success"] = False
    kept["error"] = f"could not be written as JSON: {type(error).__name__}: {error}"
    return kept


class _Delta:
    """`message_update` events of one run, agent and kind, merged while the reader is
    behind."""

    __slots__ = ("event", "key", "seq", "seq_first", "size", "texts")

    def __init__(self, key: tuple[Any, ...], event: Mapping[str, Any]) -> None:
        self.key = key
        self.event = event
        text = _delta_text(event)
        self.texts = [text]
        self.seq_first = self.seq = event.get("seq")
        self.size = _DELTA_OVERHEAD + len(text)

    def add(self, event: Mapping[str, Any]) -> int:
        """Merge `event` in; returns what it adds to the line's size."""
        text = _delta_text(event)
        self.texts.append(text)
        self.seq = event.get("seq")
        self.size += len(text)
        return len(text)

    def encode(self) -> bytes:
        if len(self.texts) == 1:
            return encode_line(self.event)
        event = self.event
        joined = "".join(self.texts)
        if self.key[0] == _PI:
            inner = event["assistantMessageEvent"]
            return encode_line({**event, "assistantMessageEvent": {**inner, "delta": joined}})
        merged = {
            **event,
            "seq": self.seq,
            "seq_first": self.seq_first,
            "delta": {**event["delta"], "text": joined},
        }
        return encode_line(merged)


# pi's dialect (rpc_pi_events.py): `message_update` with `assistantMessageEvent`.
_PI = "pi"
_PI_DELTAS = ("text_delta", "thinking_delta")


def _delta_text(event: Mapping[str, Any]) -> str:
    inner = event.get("assistantMessageEvent")
    text: str = inner["delta"] if isinstance(inner, Mapping) else event["delta"]["text"]
    return text


def _copy_delta(event: Mapping[str, Any]) -> dict[str, Any]:
    """A copy: the merged line is written later, from what the event said now."""
    if "assistantMessageEvent" in event:
        return {**event, "assistantMessageEvent": dict(event["assistantMessageEvent"])}
    return {**event, "delta": dict(event["delta"])}


class _Dropped:
    """Deltas not kept (the reader stayed away): said in their place, in order."""

    __slots__ = ("count", "run_id", "seq_first", "seq_last", "session_id", "waiting")
    size = _DELTA_OVERHEAD

    def __init__(self, event: Mapping[str, Any], waiting: int) -> None:
        self.session_id = event.get("session_id")
        self.run_id = event.get("run_id")
        self.count = 1
        self.seq_first = self.seq_last = event.get("seq")
        self.waiting = waiting

    def add(self, event: Mapping[str, Any]) -> None:
        self.count += 1
        self.seq_last = event.get("seq")

    def encode(self) -> bytes:
        return encode_line(
            {
                "type": "output_dropped",
                "v": PROTOCOL_VERSION,
                "session_id": self.session_id,
                "run_id": self.run_id,
                "count": self.count,
                "seq_first": self.seq_first,
                "seq_last": self.seq_last,
                "reason": (
                    f"the reader fell {self.waiting >> 20} MiB behind: these "
                    "message_update events were not kept; message_end and get_messages "
                    "hold the whole text"
                ),
            }
        )


_Item = bytes | _Delta | _Dropped


def _size(item: _Item) -> int:
    return len(item) if isinstance(item, bytes) else item.size


def _delta_key(obj: Mapping[str, Any]) -> tuple[Any, ...] | None:
    if obj.get("type") != "message_update":
        return None
    inner = obj.get("assistantMessageEvent")
    if isinstance(inner, Mapping):
        # pi's: merged too, never dropped (pi's clients know no `output_dropped`).
        if inner.get("type") in _PI_DELTAS and isinstance(inner.get("delta"), str):
            return (_PI, inner.get("contentIndex"), inner.get("type"))
        return None
    delta = obj.get("delta")
    if not isinstance(delta, Mapping) or not isinstance(delta.get("text"), str):
        return None
    # A sub-agent's deltas never merge into another agent's.
    return (obj.get("session_id"), obj.get("run_id"), obj.get("agent_id"), delta.get("type"))


class LineWriter:
    """Protocol lines to `out` (a file descriptor, or anything with a raw `write`)."""

    def __init__(
        self,
        out: int | Writable,
        gap: float = WRITE_GAP_S,
        *,
        behind_bytes: int = BEHIND_BYTES,
        delta_limit_bytes: int = DELTA_LIMIT_BYTES,
    ) -> None:
        if isinstance(out, int):
            fd = out
            self._fd: int | None = fd
            self._write: Callable[[memoryview], int | None] = lambda data: os.write(fd, data)
        else:
            self._fd = None
            self._write = out.write
        self._gap = gap
        self._behind = behind_bytes
        self._delta_limit = delta_limit_bytes
        self._cond = threading.Condition()
        self._pending: deque[_Item] = deque()
        self._pending_bytes = 0
        self._in_flight = 0  # bytes the thread took and has not written yet
        self._idle = True
        self._given_up = False
        self._last_write = -gap
        self._closing = False
        self.broken = False
        threading.Thread(target=self._run, name="rpc-stdout", daemon=True).start()

    # -- the loop's side ------------------------------------------------------------------

    def send(self, obj: Mapping[str, Any]) -> None:
        if self.broken:
            return
        key = _delta_key(obj)
        data = encode_line(obj) if key is None else None
        with self._cond:
            if data is not None:
                self._append(data)
            else:
                assert key is not None
                self._add_delta(key, obj)
            if self._idle:
                self._cond.notify()

    def _add_delta(self, key: tuple[Any, ...], obj: Mapping[str, Any]) -> None:
        waiting = self._pending_bytes + self._in_flight
        last = self._pending[-1] if self._pending else None
        if waiting < self._behind:
            self._append(encode_line(obj))
        elif waiting >= self._delta_limit and key[0] != _PI:
            if isinstance(last, _Dropped) and last.session_id == obj.get("session_id"):
                last.add(obj)
            else:
                self._append(_Dropped(obj, waiting))
        elif isinstance(last, _Delta) and last.key == key:
            self._pending_bytes += last.add(obj)
        else:
            self._append(_Delta(key, _copy_delta(obj)))

    def _append(self, item: _Item) -> None:
        self._pending.append(item)
        self._pending_bytes += _size(item)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every line sent so far is written (or the reader is gone, or
        `give_up()` was called); whether all of it went out."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while (self._pending or self._in_flight) and not self.broken:
                if self._given_up:
                    return False
                left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
                if left <= 0:
                    return False
                # Short waits: a signal handler (which may call give_up) runs between.
                self._cond.wait(left)
            return not self.broken

    def close(self, timeout: float | None = None) -> bool:
        """`flush`, then end the thread; whether every line went out."""
        flushed = self.flush(timeout)
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        return flushed

    def give_up(self) -> None:
        """Stop `flush` from waiting for a reader that stays away. Safe in a signal
        handler: it takes no lock."""
        self._given_up = True

    # -- the thread's side ----------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending:
                    if self._closing:
                        return
                    self._idle = True
                    self._cond.wait()
                self._idle = False
            # Gather what comes within the gap after the last write into this one.
            wait = self._last_write + self._gap - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            batch: list[_Item] = []
            with self._cond:
                size = 0
                while self._pending and size < _BATCH_BYTES:
                    item = self._pending.popleft()
                    batch.append(item)
                    size += _size(item)
                self._in_flight = size
                self._pending_bytes -= size
            try:
                data = b"".join(i if isinstance(i, bytes) else i.encode() for i in batch)
                written = self._write_all(memoryview(data))
            except Exception:  # a bug here must not leave `flush` waiting for ever
                log.exception("rpc output failed; no more lines are written")
                written = False
            self._last_write = time.monotonic()
            with self._cond:
                self._in_flight = 0
                if not written:
                    # The driver went away; stdin's end will follow and settle the session.
                    self.broken = True
                    self._pending.clear()
                    self._pending_bytes = 0
                self._cond.notify_all()
            if not written:
                return

    def _write_all(self, view: memoryview) -> bool:
        while view:
            try:
                count = self._write(view)
            except InterruptedError:
                continue
            except BlockingIOError:
                self._wait_writable()
                continue
            except (OSError, ValueError):
                return False
            if count is None:  # a non-blocking raw file with no room
                self._wait_writable()
                continue
            view = view[count:]
        return True

    def _wait_writable(self) -> None:
        if self._fd is None:
            time.sleep(0.001)
            return
        poller = select.poll()
        poller.register(self._fd, select.POLLOUT)
        # An error or hang-up shows as the next write's own error.
        poller.poll(1000)
