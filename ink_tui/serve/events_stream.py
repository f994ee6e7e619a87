"""One session's events for any number of SSE clients: a replay buffer and live tails.

What it promises a client of `GET /api/sessions/{id}/events` (and of a prompt sent with
`?wait=settled`):

- Each SSE message is `id: <seq>`, `event: <type>`, `data: <the public event as JSON>`,
  in seq order, and never one twice: a listener's backlog and its live tail are taken
  in one step of the event loop, and anything at or below the last seq sent is skipped.
- Seqs go on from the session's kept last seq (`last_seq` at start: reopened or
  restarted, it never repeats one), with an empty buffer.
- Reconnecting with `Last-Event-ID: N` replays every event after N still in the buffer
  (the newest `capacity` events). When some of them are gone (N is older than the
  buffer, or from before the session was reopened here), or N is newer than anything
  here, the first message is a `replay_gap` event (`last_event_id`, `oldest_seq`,
  `last_seq`, the `missing_first`..`missing_last` seqs it will not send, `reload`; its
  SSE id is `last_seq`) and live events follow: the client reloads the state with
  `GET /api/sessions/{id}`, whose `last_seq` says which later events it already holds.
- Every data line is strict JSON (`strict_json.dumps`: a NaN is written as "NaN").
- Deltas are merged: consecutive `message_update` events of one run, agent and kind that are
  waiting for the same client become one (its `seq` and id are the last one's, and
  `seq_first` the first one's), and a client is written to at most every
  `MERGE_WINDOW_S` while text streams. So one slow client costs one write per window,
  not one per delta, and never slows the session or other clients.
- A client too slow to keep up (`LISTENER_LIMIT` events waiting) is cut off: its stream
  ends and the browser reconnects with its Last-Event-ID, replaying from the buffer.
- Closing the log (the session closed, the server stopping) ends every stream.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ink_tui import fastpaths
from ink_tui.control.public_event_types import PROTOCOL_VERSION, ReplayGapEvent
from ink_tui.core import strict_json
from ink_tui.fastpaths import json_encoder

BUFFER_CAPACITY = 5000
LISTENER_LIMIT = 20000
MERGE_WINDOW_S = 0.016


@dataclass(slots=True)
class Frame:
    seq: int
    type: str
    event: dict[str, Any]


@dataclass(slots=True, eq=False)
class Listener:
    """One client's tail of the log."""

    after: int
    backlog: list[Frame]
    gap: ReplayGapEvent | None = None
    pending: deque[Frame] = field(default_factory=deque)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    overflowed: bool = False
    closed: bool = False

    def push(self, frame: Frame) -> None:
        if len(self.pending) >= LISTENER_LIMIT:
            self.overflowed = True
        else:
            self.pending.append(frame)
        self.ready.set()

    def close(self) -> None:
        self.closed = True
        self.ready.set()

    async def next_batch(self) -> list[Frame]:
        """What arrived since the last call (waits for something); [] once closed."""
        while not self.pending and not self.closed and not self.overflowed:
            self.ready.clear()
            await self.ready.wait()
        if self.overflowed:
            return []
        return self.take()

    def take(self) -> list[Frame]:
        """What is waiting now, without waiting ([] if nothing)."""
        batch = list(self.pending)
        self.pending.clear()
        return batch


class EventLog:
    def __init__(
        self, session_id: str, capacity: int = BUFFER_CAPACITY, *, last_seq: int = 0
    ) -> None:
        self.session_id = session_id
        # A reopened session's events go on after the seq it had sent before.
        self.last_seq = last_seq
        self._buffer: deque[Frame] = deque(maxlen=capacity)
        self._listeners: set[Listener] = set()
        self.closed = False

    def append(self, event: dict[str, Any]) -> None:
        frame = Frame(int(event["seq"]), str(event["type"]), event)
        self.last_seq = frame.seq
        self._buffer.append(frame)
        for listener in tuple(self._listeners):
            listener.push(frame)

    def listen(self, after: int | None) -> Listener:
        """A tail from now on; with `after`, the buffered events after it first."""
        if after is None or after == self.last_seq:
            listener = Listener(self.last_seq, [])
        else:
            oldest = self._buffer[0].seq if self._buffer else self.last_seq + 1
            if after > self.last_seq or after + 1 < oldest:
                listener = Listener(self.last_seq, [], gap=self._gap(after, oldest))
            else:
                listener = Listener(after, [f for f in self._buffer if f.seq > after])
        if self.closed:
            listener.close()
        else:
            self._listeners.add(listener)
        return listener

    def forget(self, listener: Listener) -> None:
        self._listeners.discard(listener)

    def close(self) -> None:
        self.closed = True
        for listener in tuple(self._listeners):
            listener.close()
        self._listeners.clear()

    def _gap(self, after: int, oldest: int) -> ReplayGapEvent:
        # The stream goes on live after this, so what the client lacks is everything up
        # to last_seq (the buffered part too: the reloaded state holds it). A reopened
        # or restarted session's buffer starts empty at its kept seq.
        known = after <= self.last_seq
        return {
            "type": "replay_gap",
            "v": PROTOCOL_VERSION,
            "session_id": self.session_id,
            "run_id": None,
            "last_event_id": after,
            "oldest_seq": oldest,
            "last_seq": self.last_seq,
            "missing_first": after + 1 if known else None,
            "missing_last": self.last_seq if known else None,
            "reload": f"/api/sessions/{self.session_id}",
        }


# `json.dumps` with options makes a new encoder each call, which cost more than the
# encoding of a small event: one, made once, for every event. (Its `encode` still makes
# a C encoder per call; the `json_events` fast path makes that once too.)
_ENCODER = json_encoder.stock(default=str)


@cache
def _encoder() -> Callable[[Any], str]:
    if fastpaths.enabled("json_events"):
        return json_encoder.compact_encoder(default=str)
    return _ENCODER.encode


def _strict_json(event: Mapping[str, Any]) -> str:
    """`strict_json.dumps` with the encoder above: a non-finite float as its name."""
    encode = _encoder()
    try:
        return encode(event)
    except ValueError as error:
        if "Out of range float" not in str(error):
            raise
    return encode(strict_json.finite(event))


def encode(seq: int, kind: str, event: Mapping[str, Any]) -> bytes:
    # Compact JSON holds no newline (they are escaped inside strings): one data line.
    # Strict: a non-finite float (a model's NaN) is written as a string, never bare.
    data = _strict_json(event)
    return f"id: {seq}\nevent: {kind}\ndata: {data}\n\n".encode()


def merge_deltas(frames: list[Frame], mask: Callable[[str], str]) -> list[Frame]:
    """Consecutive message_update frames of one run and kind as one (see the module)."""
    out: list[Frame] = []
    run: list[Frame] = []

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            last = run[-1].event
            text = mask("".join(f.event["delta"]["text"] for f in run))
            merged = {
                **last,
                "seq_first": run[0].seq,
                "delta": {**last["delta"], "text": text},
            }
            out.append(Frame(run[-1].seq, "message_update", merged))
        run.clear()

    for frame in frames:
        if frame.type == "message_update" and (
            not run or (_stream_of(run[-1].event) == _stream_of(frame.event))
        ):
            run.append(frame)
            continue
        flush()
        if frame.type == "message_update":
            run.append(frame)
        else:
            out.append(frame)
    flush()
    return out


def _stream_of(event: Mapping[str, Any]) -> tuple[object, object, object]:
    """Whose text a delta is: the run, the agent (a sub-agent's share the parent's run)
    and the kind; only deltas of one such stream merge."""
    return (event.get("run_id"), event.get("agent_id"), event["delta"]["type"])


async def sse_stream(
    log: EventLog,
    listener: Listener,
    *,
    mask: Callable[[str], str],
    until_settled: bool = False,
    on_hang_up: Callable[[], None] | None = None,
) -> AsyncGenerator[bytes, None]:
    """The SSE body for `listener`. With `until_settled`, it ends after `agent_settled`;
    if it is closed before that (the client hung up), `on_hang_up` is called."""
    last_sent = listener.after
    settled = False
    loop = asyncio.get_running_loop()
    # While text streams, a write no sooner than this (loop time): the deltas that come
    # meanwhile gather into it. Waited for only when a delta comes that soon, so a
    # stream slower than the window costs no timer.
    window_ends = 0.0
    try:
        if listener.gap is not None:
            # Its id is where the live events go on from.
            yield encode(listener.after, "replay_gap", listener.gap)
        batch = listener.backlog
        listener.backlog = []
        while True:
            frames = [f for f in batch if f.seq > last_sent]
            if frames:
                streaming = any(f.type == "message_update" for f in frames)
                if streaming and loop.time() < window_ends:
                    await asyncio.sleep(window_ends - loop.time())
                    frames += [f for f in listener.take() if f.seq > last_sent]
                last_sent = frames[-1].seq
                # One frame (a delta a write, at a model's pace) has nothing to merge.
                merged = merge_deltas(frames, mask) if len(frames) > 1 else frames
                if until_settled:
                    for index, frame in enumerate(merged):
                        if frame.type == "agent_settled":
                            settled = True
                            merged = merged[: index + 1]
                            break
                if streaming:
                    window_ends = loop.time() + MERGE_WINDOW_S
                yield b"".join([encode(f.seq, f.type, f.event) for f in merged])
                if settled:
                    return
            batch = await listener.next_batch()
            if not batch:
                return
    finally:
        log.forget(listener)
        if until_settled and not settled and on_hang_up is not None:
            on_hang_up()
