"""Assembling one reply from Anthropic's Messages API stream into an `AssistantMessage`.

The stream is a sequence of typed events: `message_start` (the model, the prompt's usage),
then per content block `content_block_start` / `content_block_delta` / `content_block_stop`
(text, thinking with its signature, redacted thinking, `tool_use` whose input arrives as
pieces of JSON), `message_delta` (the stop reason, the output's usage) and `message_stop`,
with `ping`s anywhere and an `error` event when the server fails mid-stream. A reply is
whole only once `message_stop` came.

It plays the same part as `openai_reply.ReplyBuilder` for the shared readers
(`openai_body`) and `reply_end`: `feed()` the events of one read, `take()` what to show
(same-kind runs merged into one chunk), `finish()` at the end. A whole message sent as
one JSON body (no stream) is taken too.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ink_tui.core.messages import AssistantMessage, StopReason, ThinkingBlock, ToolCall, Usage
from ink_tui.core.provider_api import ProviderError, TextChunk, ThinkingChunk
from ink_tui.providers.openai_errors import REASON_LIMIT, error_text, shorten
from ink_tui.providers.openai_reply import normalise_finish_reason, parse_arguments
from ink_tui.providers.reply_assembly import ReplyAssembly, ShownChunk
from ink_tui.providers.retry import TransientFailure

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
# Error types another attempt may get past (the HTTP statuses 529, 500 and 429).
_TRANSIENT_ERRORS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}


@dataclass(slots=True)
class _Block:
    kind: str  # "text", "thinking", "redacted_thinking", "tool_use" or one we do not know
    text: list[str] = field(default_factory=list)  # text, thinking, or tool input JSON
    signature: str = ""
    id: str = ""
    name: str = ""
    data: str = ""  # a redacted thinking block's encrypted content
    input: object = None  # a tool_use block's input when sent whole (no stream)


class AnthropicReply(ReplyAssembly):
    """Assembles one reply from Messages API events (or one non-streamed message)."""

    # For `reply_end.judge_end`'s messages.
    chunk_name = "Messages API event"
    end_name = "message_stop"

    def __init__(self, model: str, source: str = "the server", redact: Callable[[str], str] = str):
        super().__init__(model, source, redact)
        self._blocks: list[_Block] = []
        self._by_index: dict[int, _Block] = {}
        self._stop: str | None = None
        self._usage: dict[str, int] = {}
        self._done = False
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._ignore,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
            "message": self._whole_message,
        }

    def feed(self, data: str, event: str = "message") -> None:
        if not data or data.isspace():
            return
        self.events += 1
        try:
            obj = json.loads(data)
        except ValueError:
            if event == "error":
                message = self._redact(shorten(data))
                raise ProviderError(f"error from {self._source}: {message}") from None
            raise ProviderError(
                f"{self._source} sent an event that is not valid JSON: {shorten(data, 200)!r}"
            ) from None
        if not isinstance(obj, dict):
            raise ProviderError(f"{self._source} sent an unexpected event: {shorten(data, 200)!r}")
        kind = obj.get("type")
        if kind == "error" or event == "error":
            raise self._stream_error(obj.get("error", obj))
        if kind == "ping":
            return  # a keep-alive: not a piece of the reply
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            # Judged at the end: a new event type is no reason to fail, but a stream of
            # nothing we know is not a reply.
            if self.stray is None:
                self.stray = shorten(self._redact(data), 200)
                self.stray_message = shorten(self._redact(error_text(obj)), 200)
            return
        self.chunks += 1
        handler(obj)

    @property
    def finished(self) -> bool:
        return self._done

    def finish(self) -> AssistantMessage:
        text: list[str] = []
        thinking: list[str] = []
        blocks: list[ThinkingBlock] = []
        calls: list[ToolCall] = []
        for block in self._blocks:
            if block.kind == "text":
                text.append("".join(block.text))
            elif block.kind == "thinking":
                thinking.append("".join(block.text))
                blocks.append(ThinkingBlock("".join(block.text), block.signature))
            elif block.kind == "redacted_thinking":
                blocks.append(ThinkingBlock(block.data, redacted=True))
            elif block.kind == "tool_use":
                calls.append(_finish_call(block))
        stop = _STOP_REASONS.get(self._stop or "")
        return AssistantMessage(
            text="".join(text),
            thinking="\n\n".join(part for part in thinking if part),
            tool_calls=calls,
            finish_reason=stop or normalise_finish_reason(self._stop, has_tool_calls=bool(calls)),
            usage=self._usage_now(),
            model=self._model,
            thinking_blocks=blocks,
        )

    # -- the events ---------------------------------------------------------------------

    def _ignore(self, _obj: dict[str, Any]) -> None:
        pass

    def _message_start(self, obj: dict[str, Any]) -> None:
        message = obj.get("message")
        if isinstance(message, dict):
            self._note_model(message)
            self._note_usage(message.get("usage"))

    def _block_start(self, obj: dict[str, Any]) -> None:
        raw = obj.get("content_block")
        raw = raw if isinstance(raw, dict) else {}
        block = self._new_block(raw)
        index = obj.get("index")
        if isinstance(index, int):
            self._by_index[index] = block
        if block.kind == "text" and block.text:
            self._show(TextChunk, block.text[0])
        elif block.kind == "thinking" and block.text:
            self._show(ThinkingChunk, block.text[0])

    def _block_delta(self, obj: dict[str, Any]) -> None:
        index = obj.get("index")
        block = self._by_index.get(index) if isinstance(index, int) else None
        delta = obj.get("delta")
        if not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if block is None:
            block = self._unstarted(index, kind)
            if block is None:
                return  # a kind of delta this reader does not know, as for any block
        if kind == "text_delta":
            self._add(block, TextChunk, delta.get("text"))
        elif kind == "thinking_delta":
            self._add(block, ThinkingChunk, delta.get("thinking"))
        elif kind == "signature_delta":
            signature = delta.get("signature")
            if isinstance(signature, str):
                block.signature += signature
        elif kind == "input_json_delta":
            piece = delta.get("partial_json")
            if isinstance(piece, str):
                block.text.append(piece)

    def _unstarted(self, index: object, kind: object) -> _Block | None:
        """The block a delta names that no `content_block_start` opened.

        Text and thinking start it here, so what the model wrote is kept and shown;
        the stream was out of order, but nothing in the delta is missing. A tool's
        input or a signature cannot stand without the start's id, name or thinking:
        the stream is malformed, and saying so beats completing without them.
        """
        implied = {"text_delta": "text", "thinking_delta": "thinking"}.get(str(kind))
        if implied is None:
            if kind not in ("input_json_delta", "signature_delta"):
                return None
            raise ProviderError(
                f"{self._source} sent a malformed stream: a content_block_delta "
                f"({kind}) for block {index!r}, which no content_block_start opened"
            )
        block = self._new_block({"type": implied})
        if isinstance(index, int):
            self._by_index[index] = block
        return block

    def _message_delta(self, obj: dict[str, Any]) -> None:
        delta = obj.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            self._stop = delta["stop_reason"]
        self._note_usage(obj.get("usage"))

    def _message_stop(self, _obj: dict[str, Any]) -> None:
        self._done = True

    def _whole_message(self, obj: dict[str, Any]) -> None:
        """A message sent as one JSON body: its blocks, stop reason and usage at once."""
        self._note_model(obj)
        for raw in obj.get("content") or ():
            if isinstance(raw, dict):
                block = self._new_block(raw)
                if block.kind == "text" and block.text:
                    self._show(TextChunk, block.text[0])
                elif block.kind == "thinking" and block.text:
                    self._show(ThinkingChunk, block.text[0])
        if isinstance(obj.get("stop_reason"), str):
            self._stop = obj["stop_reason"]
        self._note_usage(obj.get("usage"))
        self._done = True

    # -- helpers ------------------------------------------------------------------------

    def _new_block(self, raw: dict[str, Any]) -> _Block:
        kind = raw.get("type")
        block = _Block(kind if isinstance(kind, str) else "")
        text = raw.get("text") if block.kind == "text" else raw.get("thinking")
        if block.kind in ("text", "thinking") and isinstance(text, str) and text:
            block.text.append(text)
        signature = raw.get("signature")
        block.signature = signature if isinstance(signature, str) else ""
        data = raw.get("data")
        block.data = data if isinstance(data, str) else ""
        if block.kind == "tool_use":
            # A tool call ends a run: text on either side of it stays two chunks.
            self._end_run()
            block.id = raw["id"] if isinstance(raw.get("id"), str) else ""
            block.name = raw["name"] if isinstance(raw.get("name"), str) else ""
            block.input = raw.get("input")
        self._blocks.append(block)
        return block

    def _add(self, block: _Block, kind: type[ShownChunk], text: object) -> None:
        if isinstance(text, str) and text:
            block.text.append(text)
            self._show(kind, text)

    def _note_model(self, message: dict[str, Any]) -> None:
        model = message.get("model")
        if isinstance(model, str) and model:
            self._model = model

    def _note_usage(self, raw: object) -> None:
        # `message_delta` repeats the counts so far; the latest of each is the total.
        if isinstance(raw, dict):
            for key, value in raw.items():
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    self._usage[key] = value

    def _usage_now(self) -> Usage:
        usage = self._usage
        read = usage.get("cache_read_input_tokens", 0)
        written = usage.get("cache_creation_input_tokens", 0)
        return Usage(
            # Anthropic counts cached prompt tokens apart; the prompt is all three, as
            # OpenAI's `prompt_tokens` is (the context gauge needs the whole prompt).
            input_tokens=usage.get("input_tokens", 0) + read + written,
            output_tokens=usage.get("output_tokens", 0),
            # Tokens read from the cache (billed at a tenth); those written to it are not
            # savings yet, so they count only in the prompt.
            cached_tokens=read,
        )

    def _stream_error(self, error: object) -> Exception:
        message = self._redact(error_text(error) or "unknown error")
        kind = error.get("type") if isinstance(error, dict) else None
        named = f"{kind}: {message}" if isinstance(kind, str) and kind else message
        detail = f"error from {self._source}: {named}"
        status = _TRANSIENT_ERRORS.get(kind) if isinstance(kind, str) else None
        if status is not None:
            return TransientFailure(
                f"{kind}: {shorten(message, REASON_LIMIT)}", detail, status=status
            )
        return ProviderError(detail)


def _finish_call(block: _Block) -> ToolCall:
    raw = "".join(block.text)
    if not raw and isinstance(block.input, dict) and block.input:
        raw = json.dumps(block.input)  # sent whole rather than in pieces
    arguments, error = parse_arguments(raw)
    return ToolCall(
        id=block.id or f"toolu_{uuid.uuid4().hex[:24]}",
        name=block.name,
        arguments=arguments,
        raw_arguments=raw,
        arguments_error=error,
    )
