"""Reading the body of a chat-completions reply: an event stream, a whole JSON completion,
or an HTML page where a stream was expected.

Each reader yields what there is to show (`TextChunk`, `ThinkingChunk`) and, during a
silence, `Waiting`; at the end it asks `judge_end` whether the reply is whole and raises
what it says when not. Errors: `ProviderError` for a failure another attempt cannot fix,
`TransientFailure` for one it may (the caller retries only while nothing was shown).

Speed: a fast server sends a few characters per SSE event, so everything after the read
is done per batch where it can be (one decode, one split, one chunk to show per run of
text), and only the JSON of each event is parsed one by one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Protocol

import httpx

from ink_tui.core.messages import AssistantMessage
from ink_tui.core.provider_api import ProviderError, Waiting
from ink_tui.providers.body import BodyReader
from ink_tui.providers.openai_errors import looks_like_html, shorten
from ink_tui.providers.reply_assembly import ShownChunk
from ink_tui.providers.reply_end import CUT, HEAD_LIMIT, ReplyState, judge_end
from ink_tui.providers.retry import (
    TransientFailure,
    describe_transport_error,
    transport_failure,
)
from ink_tui.providers.sse import SSEEvent, SSEParser
from ink_tui.providers.stream_watch import StreamWatch

Shown = AsyncGenerator[ShownChunk | Waiting, None]


class Reply(ReplyState, Protocol):
    """A reply being assembled: `ReplyBuilder`, or another wire format's (anthropic_reply)."""

    def feed(self, data: str, event: str = "message") -> None: ...

    def take(self) -> list[ShownChunk]: ...

    def finish(self) -> AssistantMessage: ...


WHOLE_BODY_LIMIT = 64 * 1024 * 1024  # a non-streamed completion is read whole; not more
# After `[DONE]` we read on to the end of the body so the connection can be reused, but
# not for long: a server that keeps the stream open must not stall the reply.
DRAIN_SECONDS = 1.0


async def read_events(stream: BodyReader, watch: StreamWatch, reply: Reply, shown: str) -> Shown:
    """An event stream: shown as it arrives, then judged whole or not."""
    parser = SSEParser()
    head = bytearray()
    done = False
    cause: str | None = None
    try:
        # `pieces` written out: this loop runs once per network read, and a generator
        # between it and the body costs two more trips through a frame each time.
        while True:
            try:
                piece = await stream.read(watch.patience())
            except TimeoutError:
                yield watch.quiet()
                continue
            if piece is None:
                break
            over = watch.arrived()
            if over is not None:
                yield over
            if len(head) < HEAD_LIMIT:
                head += piece[: HEAD_LIMIT - len(head)]
            done, failure = _feed(parser.feed(piece), reply)
            for event in reply.take():
                yield event
            if failure is not None:
                raise failure
            if done:
                break
    except httpx.HTTPError as exc:
        cause = _cause(exc, shown)
    if cause is None and not done:
        # The end of the body: an event left without its blank line still counts.
        done, failure = _feed(parser.close(), reply)
        for event in reply.take():
            yield event
        if failure is not None:
            raise failure
    problem = judge_end(reply, source=shown, head=bytes(head), done=done, cause=cause)
    if problem is not None:
        raise problem
    if done:
        await _drain(stream)


async def read_whole(stream: BodyReader, watch: StreamWatch, reply: Reply, shown: str) -> Shown:
    """A completion sent as one JSON body (`stream: true` ignored)."""
    parts: list[bytes] = []
    size = 0
    try:
        async with aclosing(pieces(stream, watch)) as batches:
            async for piece in batches:
                if isinstance(piece, Waiting):
                    yield piece
                    continue
                parts.append(piece)
                size += len(piece)
                if size > WHOLE_BODY_LIMIT:
                    raise ProviderError(
                        f"the server sent a JSON body of over {WHOLE_BODY_LIMIT >> 20} MiB "
                        f"instead of a reply stream ({shown})"
                    )
    except httpx.HTTPError as exc:
        cause = _cause(exc, shown)
        raise TransientFailure(
            f"connection lost ({shorten(cause, 80)})", f"{CUT}: {cause} ({shown})"
        ) from exc
    whole = b"".join(parts)
    text = whole.decode("utf-8", "replace")
    if text.strip() and not looks_like_html(text):
        reply.feed(text)
        for event in reply.take():
            yield event
    problem = judge_end(reply, source=shown, head=whole[:HEAD_LIMIT], done=True, cause=None)
    if problem is not None:
        raise problem


async def read_page(stream: BodyReader, watch: StreamWatch, reply: Reply, shown: str) -> Shown:
    """An HTML page where a stream was expected: read its start, say what it is."""
    head = bytearray()
    cause: str | None = None
    try:
        async with aclosing(pieces(stream, watch)) as batches:
            async for piece in batches:
                if isinstance(piece, Waiting):
                    yield piece
                    continue
                head += piece
                if len(head) >= HEAD_LIMIT:
                    break
    except httpx.HTTPError as exc:
        cause = _cause(exc, shown)
    problem = judge_end(reply, source=shown, head=bytes(head), done=False, cause=cause)
    if problem is not None:
        raise problem


async def pieces(stream: BodyReader, watch: StreamWatch) -> AsyncGenerator[bytes | Waiting, None]:
    """The body batch by batch, with `Waiting` during a silence, until its end.

    Raises `ProviderError` when a silence or the attempt runs over its limit, and the
    transport's `httpx.HTTPError` when the connection breaks.
    """
    while True:
        try:
            # No abort scope here: the reader answers the signal itself.
            data = await stream.read(watch.patience())
        except TimeoutError:
            yield watch.quiet()
            continue
        if data is None:
            return
        over = watch.arrived()
        if over is not None:
            yield over
        yield data


def _cause(exc: httpx.HTTPError, shown: str) -> str:
    """What broke the body off, for the message; an error no retry can fix raises."""
    if transport_failure(exc, shown) is None:
        raise ProviderError(f"request to {shown} failed: {describe_transport_error(exc)}") from exc
    return describe_transport_error(exc)


def _feed(events: list[SSEEvent], reply: Reply) -> tuple[bool, Exception | None]:
    """Feed one read's events; whether `[DONE]` came, and the error one of them raised.

    The error is handed back rather than raised so that what came before it in the same
    read is shown first, as it would have been had it arrived in a read of its own.
    """
    try:
        for event in events:
            if _is_done(event.data):
                return True, None
            reply.feed(event.data, event.event)
    except (ProviderError, TransientFailure) as exc:
        return False, exc
    return False, None


def _is_done(data: str) -> bool:
    # Checked for every event, so the length test spares the copy `strip()` makes.
    return len(data) < 32 and data.strip() == "[DONE]"


async def _drain(stream: BodyReader) -> None:
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            while await stream.read() is not None:
                pass
    except (TimeoutError, httpx.HTTPError):
        pass  # the reply is complete; closing the response discards the rest
