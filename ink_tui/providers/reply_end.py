"""Whether a reply that stopped arriving is whole, and if not, what arrived instead.

A reply is whole once the model said why it stopped (a finish reason), or when the
server ended the stream with `[DONE]` after real chunks (a few servers never send a
finish reason). Anything else used to pass for a complete, empty or half answer; now it
is a failure that says what came: nothing, an HTML page, a JSON object that is not a
chunk, something that is not an event stream, or a stream cut before its end.

A failure that may have come before anything was shown is a `TransientFailure`: another
attempt may get a reply, and the provider retries only while nothing was shown. What
another attempt cannot fix (a login page, a wrong endpoint) is a `ProviderError`.
"""

from __future__ import annotations

import json
from typing import Protocol

from ink_tui.core.provider_api import ProviderError
from ink_tui.providers.openai_errors import describe_html, error_text, looks_like_html, shorten
from ink_tui.providers.retry import TransientFailure

# The start of a body kept to say what it was when it turned out not to be a stream.
HEAD_LIMIT = 64 * 1024
CUT = "the stream ended before the model finished"


class ReplyState(Protocol):
    """What `judge_end` asks of the reply being assembled, whatever the wire format."""

    # In messages: what one piece of a reply is called, and what ends a whole one.
    chunk_name: str  # "chat completion chunk"
    end_name: str  # "a finish reason or [DONE]"
    # Events with data, those that were pieces of a reply, and the first that was not.
    events: int
    chunks: int
    stray: str | None
    stray_message: str

    @property
    def finished(self) -> bool: ...

    def redact(self, text: str) -> str: ...


def judge_end(
    reply: ReplyState, *, source: str, head: bytes, done: bool, cause: str | None
) -> Exception | None:
    """None when the reply is whole, else the error to raise.

    `head` is the start of the body as it came, `done` whether `[DONE]` arrived, and
    `cause` what broke the connection (None when the body ended cleanly).
    """
    if reply.finished:
        return None
    if reply.chunks:
        if done and cause is None:
            return None
        why = cause or f"the server closed the stream without {reply.end_name}"
        return TransientFailure(shorten(f"{CUT}: {why}", 120), f"{CUT}: {why} ({source})")
    if reply.stray is not None:
        said = f"; it says: {reply.stray_message}" if reply.stray_message else ""
        return ProviderError(
            f"the server answered with a JSON object that is not a {reply.chunk_name}: "
            f"{reply.stray}{said} ({source}); check the base URL"
        )
    # Some servers echo the key they rejected; what they sent is quoted with it masked.
    text = reply.redact(head.decode("utf-8", "replace").strip())
    if cause is not None and not text:
        return TransientFailure(
            f"connection lost before the reply ({shorten(cause, 80)})",
            f"{CUT}: {cause}, before any of the reply arrived ({source})",
        )
    if not text:
        return TransientFailure(
            "empty reply", f"the server answered 200 with an empty body ({source})"
        )
    if looks_like_html(text):
        return ProviderError(
            f"the server answered with {describe_html(text)}, not a reply stream ({source}); "
            "check the base URL (a proxy or a login page may be in the way)"
        )
    if text.startswith("{"):
        quoted = _json_said(text, reply.chunk_name)
        if quoted is not None:
            return ProviderError(f"the server answered 200 with {quoted} ({source})")
    if done:
        return TransientFailure(
            "no reply in the stream",
            f"the server ended the stream ([DONE]) without sending any reply ({source})",
        )
    if reply.events == 0:
        return ProviderError(
            f"the server answered with something that is not an event stream: "
            f"{shorten(text, 200)!r} ({source}); check the base URL"
        )
    why = cause or f"no {reply.chunk_name} arrived"
    return TransientFailure(shorten(f"{CUT}: {why}", 120), f"{CUT}: {why} ({source})")


def _json_said(text: str, chunk_name: str) -> str | None:
    """A bare JSON object where events were expected, in words; None if it is not one."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    message = error_text(obj)
    if message:
        return f"an error instead of a reply stream: {shorten(message, 300)}"
    return f"a JSON object that is not a {chunk_name}: {shorten(text, 200)}"
