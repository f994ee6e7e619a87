"""Hypothesis strategies for whole streamed replies, and their rendering as wire bytes.

A `ReplyPlan` is what a model said: reasoning, text, several tool calls (each with the
points where its argument JSON is cut into fragments), usage and a stop reason. It is
rendered as an OpenAI chat-completions SSE body (`openai_steps`) or an Anthropic Messages
SSE body (`anthropic_steps`), and the bytes are cut at arbitrary points into the writes a
scripted server sends, so a network read may end anywhere: inside an event, a JSON
string or a UTF-8 character.

The reference-parser tests feed the same steps to ink's providers and to the official
SDKs' own stream accumulators and compare what each assembled.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tests.scripted_server import Reply, Step

# Text as models send it: any character but lone surrogates (which no UTF-8 body can hold),
# newlines, tabs and quotes included.
_CHARS = st.characters(blacklist_categories=["Cs"])
_PIECE = st.text(_CHARS, max_size=12)

# Argument values: the JSON a model may send, with no NaN or Infinity (not JSON).
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(_CHARS, max_size=10)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(_CHARS, max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_ARGUMENTS = st.dictionaries(st.text(_CHARS, max_size=8), _JSON, max_size=4)
_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
_COUNT = st.integers(min_value=0, max_value=200_000)
# Where a piece of text is cut, as positions reduced modulo its length.
_CUTS = st.lists(st.integers(min_value=0, max_value=10_000), max_size=6)


@dataclass(frozen=True)
class CallPlan:
    id: str
    name: str
    arguments: dict[str, Any]
    cuts: tuple[int, ...]
    # Whether the argument JSON escapes every non-ASCII character (`\u00e9`) or not.
    ascii: bool

    @property
    def json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=self.ascii)

    def fragments(self) -> list[str]:
        """The argument JSON cut at the planned points; some pieces may be empty."""
        return cut(self.json, self.cuts)


@dataclass(frozen=True)
class ReplyPlan:
    thinking: tuple[str, ...]
    # Anthropic only: an encrypted (redacted) thinking block's data, if one is sent.
    redacted: str | None
    text: tuple[str, ...]
    calls: tuple[CallPlan, ...]
    # Text sent after the tool calls (Anthropic: in a block of its own).
    tail: tuple[str, ...]
    # The order fragments of different calls are sent in (each call's own stay in order).
    interleave: tuple[int, ...]
    # Per fragment: whether it shares the chunk of the one before (OpenAI).
    grouped: tuple[bool, ...]
    # OpenAI: whether chunks of tool calls carry `"content": null` (as OpenAI's do).
    nulls: bool
    stop: str
    input_tokens: int
    output_tokens: int
    cache_read: int
    cache_write: int
    signature: str
    # Where the rendered body is cut into the server's writes.
    wire_cuts: tuple[int, ...]
    # Whether events are written as raw UTF-8 (so a write may end inside a character) or
    # with every non-ASCII character escaped.
    raw_utf8: bool
    # Where a keep-alive `ping` goes between Anthropic events.
    pings: tuple[int, ...]

    @property
    def text_value(self) -> str:
        return "".join(self.text + self.tail)

    @property
    def thinking_value(self) -> str:
        return "".join(self.thinking)


def cut(text: str, cuts: tuple[int, ...] | list[int]) -> list[str]:
    """`text` cut at each position (modulo its length + 1), so pieces may be empty."""
    points = sorted(c % (len(text) + 1) for c in cuts)
    pieces, start = [], 0
    for point in points:
        pieces.append(text[start:point])
        start = point
    pieces.append(text[start:])
    return pieces


@st.composite
def _calls(draw: st.DrawFn) -> tuple[CallPlan, ...]:
    count = draw(st.integers(min_value=0, max_value=4))
    names = [draw(_NAME) for _ in range(count)]
    return tuple(
        CallPlan(
            f"call_{index}_{draw(st.from_regex(r'[A-Za-z0-9]{4,12}', fullmatch=True))}",
            name,
            draw(_ARGUMENTS),
            tuple(draw(_CUTS)),
            draw(st.booleans()),
        )
        for index, name in enumerate(names)
    )


@st.composite
def reply_plans(
    draw: st.DrawFn, *, stops: tuple[str, ...], tool_stops: tuple[str, ...]
) -> ReplyPlan:
    """A reply; `stops` are the stop reasons of one without calls, `tool_stops` with."""
    calls = draw(_calls())
    fragments = sum(len(call.fragments()) for call in calls)
    return ReplyPlan(
        thinking=tuple(draw(st.lists(_PIECE, max_size=4))),
        redacted=draw(st.none() | st.from_regex(r"[A-Za-z0-9+/]{8,40}", fullmatch=True)),
        text=tuple(draw(st.lists(_PIECE, max_size=6))),
        calls=calls,
        tail=tuple(draw(st.lists(_PIECE, max_size=2))),
        interleave=tuple(draw(st.lists(st.integers(0, 3), min_size=fragments, max_size=fragments))),
        grouped=tuple(draw(st.lists(st.booleans(), min_size=fragments, max_size=fragments))),
        nulls=draw(st.booleans()),
        stop=draw(st.sampled_from(tool_stops if calls else stops)),
        input_tokens=draw(_COUNT),
        output_tokens=draw(_COUNT),
        cache_read=draw(_COUNT),
        cache_write=draw(_COUNT),
        signature=draw(st.from_regex(r"[A-Za-z0-9+/]{8,40}", fullmatch=True)),
        wire_cuts=tuple(draw(st.lists(st.integers(min_value=0, max_value=100_000), max_size=12))),
        raw_utf8=draw(st.booleans()),
        pings=tuple(draw(st.lists(st.integers(min_value=0, max_value=40), max_size=3))),
    )


def on_the_wire(body: str, cuts: tuple[int, ...]) -> Reply:
    """The body as a streamed reply whose writes end at the planned byte offsets."""
    data = body.encode()
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    steps: list[Step] = [data[a:b] for a, b in itertools.pairwise(points) if b > a]
    return Reply(steps)


# -- OpenAI chat completions -------------------------------------------------------------


def _chunk(
    choices: list[dict[str, Any]], usage: dict[str, Any] | None = None, *, ascii: bool = True
) -> str:
    body: dict[str, Any] = {
        "id": "chatcmpl-ref",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "ref-model",
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body, ensure_ascii=ascii)}\n\n"


def _delta(delta: dict[str, Any], finish: str | None = None, *, ascii: bool = True) -> str:
    return _chunk([{"index": 0, "delta": delta, "finish_reason": finish}], ascii=ascii)


def _openai_fragments(plan: ReplyPlan) -> list[dict[str, Any]]:
    """Every tool-call fragment in sending order: calls start in index order, and once
    started their fragments interleave as planned."""
    queues = [call.fragments() for call in plan.calls]
    started = 0
    out: list[dict[str, Any]] = []
    for pick in plan.interleave:
        live = [i for i in range(started) if queues[i]]
        if started < len(queues) and (not live or pick % (len(live) + 1) == len(live)):
            index = started
            started += 1
        else:
            index = live[pick % len(live)]
        piece = queues[index].pop(0)
        call = plan.calls[index]
        if len(queues[index]) == len(call.fragments()) - 1:
            out.append(
                {
                    "index": index,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": piece},
                }
            )
        else:
            out.append({"index": index, "function": {"arguments": piece}})
    return out


def openai_body(plan: ReplyPlan) -> str:
    ascii = not plan.raw_utf8
    parts = [_delta({"role": "assistant", "content": ""})]
    parts += [_delta({"reasoning_content": piece}, ascii=ascii) for piece in plan.thinking]
    parts += [_delta({"content": piece}, ascii=ascii) for piece in plan.text]
    batches: list[list[dict[str, Any]]] = []
    for fragment, grouped in zip(_openai_fragments(plan), plan.grouped, strict=True):
        if not batches or not grouped:
            batches.append([])
        batches[-1].append(fragment)
    for batch in batches:
        delta: dict[str, Any] = {"content": None} if plan.nulls else {}
        parts.append(_delta({**delta, "tool_calls": batch}, ascii=ascii))
    parts += [_delta({"content": piece}, ascii=ascii) for piece in plan.tail]
    parts.append(_delta({}, finish=plan.stop))
    usage = {
        "prompt_tokens": plan.input_tokens,
        "completion_tokens": plan.output_tokens,
        "total_tokens": plan.input_tokens + plan.output_tokens,
    }
    parts.append(_chunk([], usage=usage))
    parts.append("data: [DONE]\n\n")
    return "".join(parts)


def openai_reply(plan: ReplyPlan) -> Reply:
    return on_the_wire(openai_body(plan), plan.wire_cuts)


# -- Anthropic messages --------------------------------------------------------------------


def _event(name: str, data: dict[str, Any], *, ascii: bool = True) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data}, ensure_ascii=ascii)}\n\n"


def _block(
    index: int, start: dict[str, Any], deltas: list[dict[str, Any]], *, ascii: bool
) -> list[str]:
    events = [_event("content_block_start", {"index": index, "content_block": start})]
    events += [
        _event("content_block_delta", {"index": index, "delta": d}, ascii=ascii) for d in deltas
    ]
    events.append(_event("content_block_stop", {"index": index}))
    return events


def anthropic_events(plan: ReplyPlan) -> list[str]:
    ascii = not plan.raw_utf8
    message: dict[str, Any] = {
        "id": "msg_ref",
        "type": "message",
        "role": "assistant",
        "model": "claude-ref",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": plan.input_tokens,
            "cache_creation_input_tokens": plan.cache_write,
            "cache_read_input_tokens": plan.cache_read,
            "output_tokens": 1,
        },
    }
    events = [_event("message_start", {"message": message})]
    index = 0
    if plan.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in plan.thinking]
        # The API sends the signature whole, in one delta, at the end of the block.
        deltas.append({"type": "signature_delta", "signature": plan.signature})
        events += _block(
            index, {"type": "thinking", "thinking": "", "signature": ""}, deltas, ascii=ascii
        )
        index += 1
    if plan.redacted is not None:
        events += _block(
            index, {"type": "redacted_thinking", "data": plan.redacted}, [], ascii=ascii
        )
        index += 1
    if plan.text or not plan.calls:
        deltas = [{"type": "text_delta", "text": p} for p in plan.text]
        events += _block(index, {"type": "text", "text": ""}, deltas, ascii=ascii)
        index += 1
    for call in plan.calls:
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in call.fragments()]
        start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        events += _block(index, start, deltas, ascii=ascii)
        index += 1
    if plan.tail:
        deltas = [{"type": "text_delta", "text": p} for p in plan.tail]
        events += _block(index, {"type": "text", "text": ""}, deltas, ascii=ascii)
    for at in sorted(plan.pings, reverse=True):
        # Never before message_start: the stream begins with it.
        events.insert(1 + at % len(events), _event("ping", {}))
    events.append(
        _event(
            "message_delta",
            {
                "delta": {"stop_reason": plan.stop, "stop_sequence": None},
                "usage": {"output_tokens": plan.output_tokens},
            },
        )
    )
    events.append(_event("message_stop", {}))
    return events


def anthropic_reply(plan: ReplyPlan) -> Reply:
    return on_the_wire("".join(anthropic_events(plan)), plan.wire_cuts)
