"""Assembling one reply from an OpenAI-compatible stream into an `AssistantMessage`.

`ReplyBuilder` takes the parsed chunks (or one non-streamed completion) and gathers the
text, the reasoning, the tool-call fragments, the finish reason and the token usage;
servers differ in where reasoning arrives and how tool-call fragments are numbered.

What to show is handed out in batches: `feed()` every event of one network read, then
`take()`. Consecutive text deltas become one `TextChunk` (reasoning: one `ThinkingChunk`),
because a fast server sends a delta of a few characters per event and every chunk costs
each consumer downstream a trip; a tool-call fragment or a change of kind ends a run, so
the order of what was sent is kept.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ink_tui import fastpaths
from ink_tui.core.messages import AssistantMessage, StopReason, ToolCall, Usage
from ink_tui.core.provider_api import ProviderError, TextChunk, ThinkingChunk
from ink_tui.providers.chunk_template import ChunkTemplate, learn, text_key
from ink_tui.providers.openai_errors import REASON_LIMIT, error_text, shorten
from ink_tui.providers.reply_assembly import Pieces, ReplyAssembly
from ink_tui.providers.retry import TransientFailure, is_retryable_status

# Re-exported: the Anthropic reply reads its tool inputs the same way.
from ink_tui.providers.tool_arguments import parse_arguments as parse_arguments

# `json.loads` checks its argument and skips whitespace in Python before the C scanner
# runs; chunks are compact JSON objects, so the scanner alone does (see `_parse_json`).
# (`scan_once` is set in `JSONDecoder.__init__`, where typeshed does not see it.)
_scan_json: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

# Text chunks no template fitted before the builder stops trying to learn one.
MAX_MISFITS = 8

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    # The legacy single-function API, and spellings some compatible servers use.
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "eos": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
}


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyBuilder(ReplyAssembly):
    """Assembles one reply from parsed stream chunks (or one non-streamed completion)."""

    # For `reply_end.judge_end`'s messages.
    chunk_name = "chat completion chunk"
    end_name = "a finish reason or [DONE]"

    def __init__(
        self,
        model: str,
        source: str = "the server",
        redact: Callable[[str], str] = str,
    ) -> None:
        super().__init__(model, source, redact)
        self._text = Pieces()
        self._thinking = Pieces()
        self._calls: list[_PartialCall] = []
        # The server's tool-call `index` -> position in `_calls`.
        self._slots: dict[int, int] = {}
        # Whether any chunk had `tool_calls`; from then on `function_call` is a copy.
        self._saw_tool_calls = False
        self._finish: str | None = None
        self._usage = Usage()
        # Text chunks read by their delta alone once one has been learned (chunk_template).
        self._template: ChunkTemplate | None = None
        self._learning = fastpaths.enabled("chunk_template")
        self._misfits = 0

    def feed(self, data: str, event: str = "message") -> None:
        """Take the data of one SSE event; what it adds to show waits for `take()`."""
        template = self._template
        if template is not None:
            text = template.text_of(data)
            if text is not None:
                self.events += 1
                self.chunks += 1
                if text:
                    self._add_text(template.key, text)
                return
        if not data or data.isspace():
            return
        self.events += 1
        try:
            obj = _parse_json(data)
        except ValueError:
            if event == "error":
                message = self._redact(shorten(data))
                raise ProviderError(f"error from {self._source}: {message}") from None
            raise ProviderError(
                f"{self._source} sent a chunk that is not valid JSON: {shorten(data, 200)!r}"
            ) from None
        if not isinstance(obj, dict):
            raise ProviderError(f"{self._source} sent an unexpected chunk: {shorten(data, 200)!r}")
        if obj.get("error"):
            raise self._stream_error(obj["error"])
        if not _is_chunk(obj):
            # Judged at the end: a server may mix in objects of its own (progress, pings),
            # but a stream of nothing else is not a reply.
            if self.stray is None:
                self.stray = shorten(self._redact(data), 200)
                self.stray_message = shorten(self._redact(error_text(obj)), 200)
            return
        self.chunks += 1
        if isinstance(obj.get("usage"), dict):
            self._usage = parse_usage(obj["usage"])  # the latest report is the total
        model = obj.get("model")
        if isinstance(model, str) and model:
            self._model = model
        for choice in obj.get("choices") or ():
            # Only one completion is requested; ignore any others a server sends.
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason")
            if finish:
                self._finish = str(finish)
            # `message` instead of `delta` when the server did not stream.
            delta = choice.get("delta") or choice.get("message")
            if isinstance(delta, dict):
                self._delta(delta)
        if self._learning:
            self._learn(data, obj)

    def _learn(self, data: str, chunk: dict[str, Any]) -> None:
        template = learn(data, chunk)
        if template is not None:
            self._template = template
            self._learning = False
        elif text_key(chunk) is not None:
            # A text chunk no template fits (the server writes them some other way):
            # after a few, stop trying.
            self._misfits += 1
            self._learning = self._misfits < MAX_MISFITS

    def _add_text(self, key: str, text: str) -> None:
        if key == "content":
            self._text.append(text)
            self._show(TextChunk, text)
        else:
            self._thinking.append(text)
            self._show(ThinkingChunk, text)

    @property
    def finished(self) -> bool:
        """True once the server has said why the reply ended."""
        return self._finish is not None

    def finish(self) -> AssistantMessage:
        calls = [_finish_call(partial) for partial in self._calls]
        return AssistantMessage(
            text=self._text.text(),
            thinking=self._thinking.text(),
            tool_calls=calls,
            finish_reason=normalise_finish_reason(self._finish, has_tool_calls=bool(calls)),
            usage=self._usage,
            model=self._model,
        )

    def _delta(self, delta: dict[str, Any]) -> None:
        # DeepSeek, vLLM and llama.cpp say `reasoning_content`; OpenRouter and Ollama say
        # `reasoning`. Some send both with the same text, so take one.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._add_text("reasoning", reasoning)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._add_text("content", content)
        fragments = delta.get("tool_calls")
        if isinstance(fragments, list) and fragments:
            self._saw_tool_calls = True
            for fragment in fragments:
                if isinstance(fragment, dict):
                    self._tool_fragment(fragment)
        # The legacy single-function field counts only in a stream that has no
        # `tool_calls`: llama-cpp-python's server sends every fragment in both, and
        # reading both doubled the arguments.
        legacy = delta.get("function_call")
        if isinstance(legacy, dict) and not self._saw_tool_calls:
            self._tool_fragment({"index": 0, "function": legacy})

    def _tool_fragment(self, fragment: dict[str, Any]) -> None:
        # Text on either side of a tool call stays two chunks: consumers see them in the
        # order the server sent them, and never as one text spanning the call.
        self._end_run()
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        raw_id = fragment.get("id")
        call_id = raw_id if isinstance(raw_id, str) else ""
        partial = self._partial_for(fragment.get("index"), call_id)
        if call_id and not partial.id:
            partial.id = call_id
        name = function.get("name")
        # Some servers repeat the name in every fragment; the first one is the name.
        if isinstance(name, str) and name and not partial.name:
            partial.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            partial.arguments.append(arguments)
        elif isinstance(arguments, dict):
            partial.arguments.append(json.dumps(arguments))  # sent parsed, not as text

    def _partial_for(self, index: object, call_id: str) -> _PartialCall:
        if not isinstance(index, int) or isinstance(index, bool):
            # No index (non-streamed replies, a few servers): a known id continues its
            # call, a new id starts one, no id continues the latest.
            for partial in self._calls:
                if call_id and partial.id == call_id:
                    return partial
            if call_id or not self._calls:
                return self._new_call()
            return self._calls[-1]
        slot = self._slots.get(index)
        if slot is None or (call_id and self._calls[slot].id not in ("", call_id)):
            # A fresh index, or a server that numbers every call 0 but gives each its
            # own id: either way a new call starts here.
            self._new_call()
            slot = self._slots[index] = len(self._calls) - 1
        return self._calls[slot]

    def _new_call(self) -> _PartialCall:
        self._calls.append(_PartialCall())
        return self._calls[-1]

    def _stream_error(self, error: object) -> Exception:
        message = self._redact(error_text(error) or "unknown error")
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and not isinstance(code, bool) else None
        detail = f"error from {self._source}: {message}"
        if status is not None and is_retryable_status(status):
            reason = f"server error {status}: {shorten(message, REASON_LIMIT)}"
            return TransientFailure(reason, detail, status=status)
        return ProviderError(detail, status=status)


def _is_chunk(obj: dict[str, Any]) -> bool:
    """A chat completion chunk (or a whole completion): it has choices, usage or says so."""
    kind = obj.get("object")
    return (
        "choices" in obj
        or "usage" in obj
        or (isinstance(kind, str) and kind.startswith("chat.completion"))
    )


def _parse_json(data: str) -> Any:
    try:
        value, end = _scan_json(data, 0)
    except StopIteration:
        value, end = None, -1  # not a value at its very start: let `json.loads` judge
    if end == len(data):
        return value
    # Whitespace around the value, trailing garbage or invalid JSON: the full parser
    # accepts the first and raises the error message for the others.
    return json.loads(data)


def _finish_call(partial: _PartialCall) -> ToolCall:
    raw = "".join(partial.arguments)
    arguments, error = parse_arguments(raw)
    return ToolCall(
        id=partial.id or f"call_{uuid.uuid4().hex[:24]}",
        name=partial.name,
        arguments=arguments,
        raw_arguments=raw,
        arguments_error=error,
    )


def normalise_finish_reason(raw: str | None, *, has_tool_calls: bool) -> StopReason:
    reason = _FINISH_REASONS.get(raw, "unknown") if raw else None
    # Several servers say "stop" (or nothing) even when the reply is a tool call.
    if has_tool_calls and reason in ("stop", None):
        return "tool_calls"
    return reason or "unknown"


def parse_usage(raw: dict[str, Any]) -> Usage:
    completion = raw.get("completion_tokens_details")
    prompt = raw.get("prompt_tokens_details")
    cached = _count(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0
    return Usage(
        input_tokens=_count(raw.get("prompt_tokens")),
        output_tokens=_count(raw.get("completion_tokens")),
        reasoning_tokens=(
            _count(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0
        ),
        # DeepSeek reports cache hits under its own name.
        cached_tokens=cached or _count(raw.get("prompt_cache_hit_tokens")),
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
