"""The built-in offline demo model: a scripted `Provider` that needs no network.

ink uses it when neither an API key nor a base URL is configured, so a new user sees every
feature at once: streamed thinking and markdown, two read-only tool calls that run side
by side, a sub-agent that surveys the tests (when the `task` tool is offered), a write
and an edit of a notes file of its own (each asked about with its diff), a plain command
whose question offers "this session" and "always", a slow shell command to steer or
interrupt, follow-ups and error handling.

What it says is decided by `demo_script.plan_reply`, a pure function of the request's
messages and the names of its tools (so the demo is deterministic and knows the workspace
only through tool results); a request of its sub-agent gets the sub-agent's part.
This module streams that reply at a human pace and honours the abort signal.

Pacing and abort: the text goes out in pieces of a few characters, each after a sleep that
keeps the stream at `chars_per_second`, measured from the start of the reply so the
sleeps do not drift. Every sleep runs inside `signal.scope()`, so an abort raises
`AbortError` at once. A scope never spans a `yield`: the task it cancels is the
consumer's, which must only be cancelled while it waits inside this generator.

The sub-agent's replies also think for `subagent_think_s` first: their thinking is
spread over that time before their text streams at the same pace. Its three short steps
would otherwise be over in under two seconds, too soon for anyone to find its row and
try **x** (stop) or **s** (steer) as the tour invites; with the pause it runs some 13 s
and its row shows "thinking", then its tool, then "writing", for each step.
`chars_per_second=0` streams without sleeping, thinking pause included (for tests).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

from ink_tui.core.abort import AbortSignal
from ink_tui.core.messages import AssistantMessage, Message, ToolCall, Usage
from ink_tui.core.provider_api import (
    ModelRequest,
    ReplyDone,
    StreamEvent,
    TextChunk,
    ThinkingChunk,
)
from ink_tui.providers.demo_compaction import (
    DEMO_CONTEXT_WINDOW,
    is_summary_request,
    summary_reply,
)
from ink_tui.providers.demo_script import plan_reply
from ink_tui.providers.demo_subagent import is_survey

__all__ = ["SUBAGENT_THINK_S", "DemoProvider", "estimate_usage", "split_pieces"]

# How long each reply of the sub-agent thinks before it writes (see the docstring).
SUBAGENT_THINK_S = 3.5

# Some leading whitespace plus up to six visible characters; or trailing whitespace.
_PIECE = re.compile(r"\s*\S{1,6}|\s+")


def split_pieces(text: str) -> list[str]:
    """Cut `text` into the small pieces it streams as; they join back to `text`."""
    return _PIECE.findall(text)


def _tokens(chars: int) -> int:
    return (chars + 3) // 4  # about four characters a token


def _message_chars(message: Message) -> int:
    if isinstance(message, AssistantMessage):
        calls = sum(len(c.name) + len(c.raw_arguments) for c in message.tool_calls)
        return len(message.text) + calls
    return len(message.content)


def estimate_usage(request: ModelRequest, reply: AssistantMessage) -> Usage:
    """Plausible token counts: characters / 4 of what was sent and what was written."""
    tools = sum(
        len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in request.tools
    )
    sent = len(request.system_prompt) + tools + sum(map(_message_chars, request.messages))
    calls = sum(len(c.name) + len(c.raw_arguments) for c in reply.tool_calls)
    written = len(reply.text) + len(reply.thinking) + calls
    return Usage(
        input_tokens=_tokens(sent),
        output_tokens=_tokens(written),
        reasoning_tokens=_tokens(len(reply.thinking)),
    )


class _Pacer:
    """Sleeps so that `chars` characters take `chars / chars_per_second` from the start,
    plus the `pause_s` seconds given so far."""

    def __init__(self, chars_per_second: float, signal: AbortSignal) -> None:
        self._rate = chars_per_second
        self._signal = signal
        self._start = time.monotonic()
        self._chars = 0
        self._paused = 0.0

    async def advance(self, chars: int, pause_s: float = 0.0) -> None:
        self._signal.raise_if_aborted()
        if self._rate <= 0:
            return
        self._chars += chars
        self._paused += pause_s
        delay = self._start + self._chars / self._rate + self._paused - time.monotonic()
        if delay > 0:
            async with self._signal.scope():
                await asyncio.sleep(delay)


class DemoProvider:
    """A scripted, offline `Provider`; see the module docstring."""

    name = "demo"
    model = "demo model (offline)"
    is_demo = True
    # Small on purpose, so the tour shows a compaction (see demo_compaction.py).
    context_window = DEMO_CONTEXT_WINDOW

    def __init__(
        self,
        workspace: Path,
        *,
        chars_per_second: float = 400.0,
        subagent_think_s: float = SUBAGENT_THINK_S,
    ) -> None:
        self.workspace = workspace
        self.chars_per_second = chars_per_second
        self.subagent_think_s = subagent_think_s
        self._label = workspace.absolute().name or str(workspace)
        self._subagents = 0

    async def stream(
        self, request: ModelRequest, signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        """Stream the next scripted reply: thinking, text, then `ReplyDone` with its calls."""
        signal.raise_if_aborted()
        if is_summary_request(request):
            async for event in self._stream_summary(request, signal):
                yield event
            return
        offered = {tool.name for tool in request.tools}
        reply = plan_reply(request.messages, self._label, offered)
        # Ids unique across the whole history: the reply's position, then the call's.
        turn = sum(isinstance(m, AssistantMessage) for m in request.messages) + 1
        prefix = self._call_prefix(request.messages)
        calls = [
            ToolCall(
                id=f"{prefix}_{turn}_{n}",
                name=planned.name,
                arguments=planned.arguments,
                raw_arguments=json.dumps(planned.arguments),
            )
            for n, planned in enumerate(reply.calls, start=1)
        ]
        pacer = _Pacer(self.chars_per_second, signal)
        thoughts = split_pieces(reply.thinking)
        # The sub-agent's thinking trickles in over its pause (the tour's streams as is).
        think_s = self.subagent_think_s if is_survey(request.messages) and thoughts else 0.0
        for piece in thoughts:
            await pacer.advance(len(piece), think_s / len(thoughts))
            yield ThinkingChunk(piece)
        for piece in split_pieces(reply.text):
            await pacer.advance(len(piece))
            yield TextChunk(piece)
        for call in calls:  # a real model takes its time to write the arguments too
            await pacer.advance(len(call.raw_arguments))
        signal.raise_if_aborted()
        message = AssistantMessage(
            text=reply.text,
            thinking=reply.thinking,
            tool_calls=calls,
            finish_reason="tool_calls" if calls else "stop",
            model=self.model,
        )
        message.usage = estimate_usage(request, message)
        yield ReplyDone(message)

    def _call_prefix(self, messages: list[Message]) -> str:
        """ "demo" for the tour's calls; for a sub-agent's, "demo_subN", N counting this
        provider's sub-agents, so its ids differ from the parent's and from other
        sub-agents' (its history is fresh: the count is read back from its first call)."""
        if not is_survey(messages):
            return "demo"
        for message in messages:
            if isinstance(message, AssistantMessage) and message.tool_calls:
                return message.tool_calls[0].id.rsplit("_", 2)[0]
        self._subagents += 1
        return f"demo_sub{self._subagents}"

    async def _stream_summary(
        self, request: ModelRequest, signal: AbortSignal
    ) -> AsyncIterator[StreamEvent]:
        """A summary for compaction, at the same pace as any answer (so it can be
        interrupted like one)."""
        text = summary_reply(request)
        pacer = _Pacer(self.chars_per_second, signal)
        for piece in split_pieces(text):
            await pacer.advance(len(piece))
            yield TextChunk(piece)
        signal.raise_if_aborted()
        message = AssistantMessage(text=text, model=self.model)
        message.usage = estimate_usage(request, message)
        yield ReplyDone(message)

    async def aclose(self) -> None:
        """Nothing to release: the demo holds no connections."""
