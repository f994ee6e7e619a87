"""What the provider makes of a streamed reply, served over a real loopback connection."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from httpcore._async.http11 import AsyncHTTP11Connection

from ink_tui.core.abort import AbortController
from ink_tui.core.messages import AssistantMessage, ToolCall, Usage, UserMessage
from ink_tui.core.provider_api import (
    ModelRequest,
    ProviderError,
    ReplyDone,
    StreamEvent,
    TextChunk,
    ThinkingChunk,
)
from ink_tui.providers import body, openai_body
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.scripted_server import (
    Gate,
    Pause,
    Reply,
    ScriptedServer,
    Step,
    chunk,
    sse,
    text_reply,
    tool_reply,
)


@pytest.fixture
async def provider(server: ScriptedServer) -> AsyncIterator[OpenAICompatProvider]:
    client = OpenAICompatProvider(
        server.base_url, "test-model", "sk-test", base_delay=0.001, max_delay=0.005
    )
    yield client
    await client.aclose()


async def collect(provider: OpenAICompatProvider) -> list[StreamEvent]:
    request = ModelRequest("You are a test.", [UserMessage("hi")])
    return [event async for event in provider.stream(request, AbortController().signal)]


async def reply_of(provider: OpenAICompatProvider) -> AssistantMessage:
    events = await collect(provider)
    done = [event for event in events if isinstance(event, ReplyDone)]
    assert len(done) == 1 and events[-1] is done[0]
    return done[0].message


def call_fragment(index: int, **fields: Any) -> str:
    """One tool-call fragment; `arguments`/`name` go under `function`, the rest beside it."""
    function = {k: fields.pop(k) for k in ("name", "arguments") if k in fields}
    return chunk({"tool_calls": [{"index": index, **fields, "function": function}]})


def content(text: str) -> str:
    return chunk({"content": text})


def sse_raw(obj: Any) -> str:
    return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n"


def shown(events: list[StreamEvent]) -> list[TextChunk | ThinkingChunk]:
    """The text and reasoning events with same-kind neighbours joined.

    How many chunks a run of deltas becomes depends on how the bytes were split into
    network reads, which a test over a real socket does not control; what is shown, and
    in which order, does not.
    """
    out: list[TextChunk | ThinkingChunk] = []
    for event in events:
        if not isinstance(event, (TextChunk, ThinkingChunk)):
            continue
        if out and type(out[-1]) is type(event):
            out[-1] = type(event)(out[-1].text + event.text)
        else:
            out.append(type(event)(event.text))
    return out


DONE = "data: [DONE]\n\n"


# -- text, reasoning, usage ------------------------------------------------------------


async def test_plain_text_reply(server: ScriptedServer, provider: OpenAICompatProvider) -> None:
    server.push(text_reply("Hello there, world", pieces=3))
    events = await collect(provider)
    assert shown(events) == [TextChunk("Hello there, world")]
    assert all(event.text for event in events if isinstance(event, TextChunk))
    message = events[-1].message if isinstance(events[-1], ReplyDone) else None
    assert message == AssistantMessage(
        text="Hello there, world",
        finish_reason="stop",
        usage=Usage(input_tokens=10, output_tokens=5),
        model="test-model",
    )


async def test_reasoning_then_text_in_order(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(
        Reply(
            [
                chunk({"role": "assistant", "content": None, "reasoning_content": "Let me"}),
                chunk({"reasoning_content": " think."}),
                chunk({"reasoning": " Ollama style."}),
                # Some servers send both fields with the same text: it must appear once.
                chunk({"reasoning": " Both.", "reasoning_content": " Both."}),
                chunk({"content": "Answer", "reasoning_content": None}),
                content(" here."),
                chunk({}, finish="stop"),
                DONE,
            ]
        )
    )
    events = await collect(provider)
    assert shown(events) == [
        ThinkingChunk("Let me think. Ollama style. Both."),
        TextChunk("Answer here."),
    ]
    assert isinstance(events[-1], ReplyDone)
    assert events[-1].message.thinking == "Let me think. Ollama style. Both."
    assert events[-1].message.text == "Answer here."


async def test_usage_with_reasoning_and_cached_tokens(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 340,
        "total_tokens": 1540,
        "completion_tokens_details": {"reasoning_tokens": 200},
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    server.push(
        Reply(
            [
                content("x"),
                chunk({}, finish="stop"),
                sse({"choices": [], "usage": usage, "model": "served-model-2024"}),
                DONE,
            ]
        )
    )
    message = await reply_of(provider)
    assert message.usage == Usage(
        input_tokens=1200, output_tokens=340, reasoning_tokens=200, cached_tokens=1024
    )
    assert message.model == "served-model-2024"


async def test_deepseek_cache_hits_count_as_cached(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    usage = {"prompt_tokens": 50, "completion_tokens": 2, "prompt_cache_hit_tokens": 32}
    server.push(Reply([content("x"), chunk({}, finish="stop", usage=usage), DONE]))
    assert (await reply_of(provider)).usage == Usage(50, 2, 0, 32)


# -- tool calls ------------------------------------------------------------------------


async def test_two_tool_calls_interleaved_by_index(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(
        Reply(
            [
                chunk({"role": "assistant", "content": None}),
                call_fragment(0, id="call_a", type="function", name="read", arguments=""),
                call_fragment(1, id="call_b", type="function", name="grep", arguments='{"pat'),
                call_fragment(0, arguments='{"path": '),
                call_fragment(1, arguments='tern": "TODO"'),
                call_fragment(0, arguments='"src/main.py"}'),
                call_fragment(1, arguments=', "path": "."}'),
                chunk({}, finish="tool_calls"),
                DONE,
            ]
        )
    )
    message = await reply_of(provider)
    assert message.tool_calls == [
        ToolCall("call_a", "read", {"path": "src/main.py"}, '{"path": "src/main.py"}'),
        ToolCall(
            "call_b",
            "grep",
            {"pattern": "TODO", "path": "."},
            '{"pattern": "TODO", "path": "."}',
        ),
    ]
    assert message.finish_reason == "tool_calls"
    assert message.text == ""


async def test_tool_reply_helper_with_text(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(tool_reply([("ls", {"path": "."}, "id-1"), ("bash", {"cmd": "pwd"})], text="Hm."))
    message = await reply_of(provider)
    assert message.text == "Hm."
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("id-1", "ls", {"path": "."}),
        ("call_1_bash", "bash", {"cmd": "pwd"}),
    ]


async def test_tool_calls_without_ids_get_distinct_generated_ids(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(
        Reply(
            [
                call_fragment(0, name="ls", arguments="{}"),
                call_fragment(1, name="ls", arguments='{"path": "a"}'),
                chunk({}, finish="tool_calls"),
            ]
        )
    )
    calls = (await reply_of(provider)).tool_calls
    assert [c.name for c in calls] == ["ls", "ls"]
    assert all(c.id.startswith("call_") and len(c.id) > 10 for c in calls)
    assert calls[0].id != calls[1].id


async def test_every_call_numbered_zero_but_with_own_ids(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(
        Reply(
            [
                call_fragment(0, id="first", name="read", arguments='{"path": "a"}'),
                call_fragment(0, id="second", name="read", arguments='{"path": '),
                call_fragment(0, arguments='"b"}'),
                chunk({}, finish="tool_calls"),
            ]
        )
    )
    calls = (await reply_of(provider)).tool_calls
    assert [(c.id, c.arguments) for c in calls] == [
        ("first", {"path": "a"}),
        ("second", {"path": "b"}),
    ]


@pytest.mark.parametrize(
    ("raw", "arguments", "error_start"),
    [
        ("", {}, None),
        ("   ", {}, None),
        ('{"path": ', {}, "invalid JSON in arguments: Expecting value"),
        ("[1, 2]", {}, "invalid JSON in arguments: expected an object, got list"),
        ('"text"', {}, "invalid JSON in arguments: expected an object, got str"),
        ('{"ok": true}', {"ok": True}, None),
    ],
)
async def test_tool_call_arguments(
    server: ScriptedServer,
    provider: OpenAICompatProvider,
    raw: str,
    arguments: dict[str, Any],
    error_start: str | None,
) -> None:
    server.push(
        Reply([call_fragment(0, id="c1", name="edit", arguments=raw), chunk({}, "tool_calls")])
    )
    [call] = (await reply_of(provider)).tool_calls
    assert call.arguments == arguments
    assert call.raw_arguments == raw  # kept verbatim so the history replays faithfully
    if error_start is None:
        assert call.arguments_error is None
    else:
        assert call.arguments_error is not None
        assert call.arguments_error.startswith(error_start)


@pytest.mark.parametrize(
    ("finish", "with_call", "expected"),
    [
        ("stop", False, "stop"),
        ("length", False, "length"),
        ("content_filter", False, "content_filter"),
        ("tool_calls", True, "tool_calls"),
        ("function_call", True, "tool_calls"),
        ("stop", True, "tool_calls"),  # llama.cpp and others say "stop" for tool calls
        ("length", True, "length"),
        ("something_new", False, "unknown"),
        (None, False, "unknown"),
    ],
)
async def test_finish_reasons(
    server: ScriptedServer,
    provider: OpenAICompatProvider,
    finish: str | None,
    with_call: bool,
    expected: str,
) -> None:
    steps: list[Step] = [content("x")]
    if with_call:
        steps.append(call_fragment(0, id="c", name="ls", arguments="{}"))
    steps += [chunk({}, finish=finish), DONE]
    server.push(Reply(steps))
    assert (await reply_of(provider)).finish_reason == expected


# -- deltas merged per network read ---------------------------------------------------


async def test_deltas_of_one_read_merge_by_kind_in_order(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    one_read = "".join(
        [
            chunk({"role": "assistant", "content": None, "reasoning_content": "Think"}),
            chunk({"reasoning_content": "ing."}),
            content("Let me "),
            content("look."),
            call_fragment(0, id="c1", type="function", name="ls", arguments='{"path": "."}'),
            content(" Then "),
            content("more."),
            chunk({"reasoning": " Again."}),
            content(" Done."),
            chunk({}, finish="tool_calls"),
            DONE,
        ]
    )
    # One step is one HTTP chunk: httpx hands it over in one piece.
    server.push(Reply([one_read]))
    events = await collect(provider)
    assert events[:-1] == [
        ThinkingChunk("Thinking."),
        TextChunk("Let me look."),
        # The tool call between them keeps these two texts apart.
        TextChunk(" Then more."),
        ThinkingChunk(" Again."),
        TextChunk(" Done."),
    ]
    assert isinstance(events[-1], ReplyDone)
    message = events[-1].message
    assert (message.text, message.thinking) == ("Let me look. Then more. Done.", "Thinking. Again.")
    assert [(c.id, c.arguments) for c in message.tool_calls] == [("c1", {"path": "."})]


async def test_deltas_that_piled_up_while_the_consumer_was_busy_come_as_one(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    pieces = [f"w{n} " for n in range(300)]
    gate = Gate()
    # Each piece in an HTTP chunk of its own, as a real server streams them.
    server.push(Reply([*(content(piece) for piece in pieces), gate, chunk({}, "stop"), DONE]))
    stream = provider.stream(
        ModelRequest("You are a test.", [UserMessage("hi")]), AbortController().signal
    )
    first = asyncio.ensure_future(anext(stream))
    await asyncio.to_thread(gate.reached.wait, 5)  # the server has sent every piece
    await asyncio.sleep(0.05)  # ...and they have landed on our side
    rest: list[StreamEvent] = [await first]
    gate.open()
    rest += [event async for event in stream]
    texts = [event for event in rest if isinstance(event, TextChunk)]
    assert "".join(text.text for text in texts) == "".join(pieces)
    # Not 300 events: whatever was there when the consumer asked came together.
    assert len(texts) <= 3
    assert isinstance(rest[-1], ReplyDone)


async def test_reading_pauses_while_a_slow_consumer_has_enough_waiting(
    server: ScriptedServer, provider: OpenAICompatProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # About three events' worth of bytes (each is an HTTP chunk of some 130 bytes).
    monkeypatch.setattr(body, "READ_AHEAD", 300)
    # A network read's chunks come as one piece of the body (`bulk_chunks`), so a batch
    # is the read-ahead plus at most one read: make a read small too.
    monkeypatch.setattr(AsyncHTTP11Connection, "READ_NUM_BYTES", 150)
    monkeypatch.setattr(body, "READ_MORE", 150)  # the same bound for a pushed body
    pieces = [f"p{n:03} " for n in range(100)]
    gate = Gate()
    server.push(Reply([*(content(piece) for piece in pieces), gate, chunk({}, "stop"), DONE]))
    stream = provider.stream(
        ModelRequest("You are a test.", [UserMessage("hi")]), AbortController().signal
    )
    first = asyncio.ensure_future(anext(stream))
    await asyncio.to_thread(gate.reached.wait, 5)
    await asyncio.sleep(0.05)
    events: list[StreamEvent] = [await first]
    gate.open()
    events += [event async for event in stream]
    texts = [event.text for event in events if isinstance(event, TextChunk)]
    assert "".join(texts) == "".join(pieces)
    # Everything was there to take, but never more than the read-ahead at once.
    assert max(len(text) for text in texts) <= 4 * len(pieces[0])


async def test_text_is_shown_without_waiting_for_more(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    gate = Gate()
    server.push(text_reply("first then the rest", pieces=2, gate=gate))
    stream = provider.stream(
        ModelRequest("You are a test.", [UserMessage("hi")]), AbortController().signal
    )
    try:
        # The server holds the rest back: the first piece must come on its own.
        assert await asyncio.wait_for(anext(stream), 2) == TextChunk("first then")
        gate.open()
        rest = [event async for event in stream]
    finally:
        gate.open()
    assert shown(rest) == [TextChunk(" the rest")]


async def test_text_before_an_error_in_the_same_read_is_shown_first(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    overloaded = sse({"error": {"message": "Provider overloaded", "code": 502}})
    server.push(Reply([content("Part") + content("ial") + overloaded + DONE]))
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="Provider overloaded") as caught:
        async for event in provider.stream(
            ModelRequest("", [UserMessage("hi")]), AbortController().signal
        ):
            seen.append(event)
    assert seen == [TextChunk("Partial")]
    # The user saw part of the reply, so the retryable error is not retried.
    assert "not retried" in str(caught.value)
    assert len(server.requests) == 1


# -- SSE framing over the wire ---------------------------------------------------------


async def test_crlf_line_endings(server: ScriptedServer, provider: OpenAICompatProvider) -> None:
    steps = [content("a"), content("b"), chunk({}, finish="stop"), DONE]
    server.push(Reply([step.replace("\n", "\r\n") for step in steps]))
    message = await reply_of(provider)
    assert (message.text, message.finish_reason) == ("ab", "stop")


async def test_comments_keep_alives_and_extra_fields(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(
        Reply(
            [
                ": OPENROUTER PROCESSING\n\n",
                "retry: 3000\n\n",
                "event: message\nid: 1\n" + content("one"),
                ":\n",
                "id: 2\ndata:" + json.dumps({"choices": [{"index": 0, "delta": {"content": "2"}}]}),
                "\n\n",
                chunk({}, finish="stop"),
                DONE,
            ]
        )
    )
    assert (await reply_of(provider)).text == "one2"


async def test_multi_line_data(server: ScriptedServer, provider: OpenAICompatProvider) -> None:
    # JSON allows a newline between tokens, so a server may spread one chunk over lines.
    server.push(
        Reply(
            [
                'data: {"choices": [{"index": 0,\ndata: "delta": {"content": "joined"}}]}\n\n',
                chunk({}, finish="stop"),
            ]
        )
    )
    assert (await reply_of(provider)).text == "joined"


async def test_missing_done_and_no_final_blank_line(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    last = chunk({}, finish="length").rstrip("\n")
    server.push(Reply([content("cut "), content("short"), last]))
    message = await reply_of(provider)
    assert (message.text, message.finish_reason) == ("cut short", "length")


async def test_chunks_split_anywhere_including_inside_utf8(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    text = {"choices": [{"index": 0, "delta": {"content": "héllo wörld ✓ 🙂"}}]}
    # Unescaped, so the characters travel as multi-byte UTF-8 rather than \u escapes.
    raw = (sse_raw(text) + chunk({}, finish="stop") + DONE).encode()
    # Cut inside "é" (2 bytes), "✓" (3 bytes) and "🙂" (4 bytes), and inside "\n\n".
    cuts = sorted(
        {
            raw.index("é".encode()) + 1,
            raw.index("✓".encode()) + 2,
            raw.index("🙂".encode()) + 3,
            raw.index(b"\n\n") + 1,
        }
    )
    steps: list[Step] = []
    start = 0
    for cut in [*cuts, len(raw)]:
        # The pause keeps each piece its own read on the client side.
        steps += [raw[start:cut], Pause(0.02)]
        start = cut
    server.push(Reply(steps))
    events = await collect(provider)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "héllo wörld ✓ 🙂"
    assert isinstance(events[-1], ReplyDone)
    assert "\ufffd" not in events[-1].message.text


async def test_a_stream_of_nothing_but_done_is_not_a_reply(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    # Nothing was shown, so each attempt is retried; the last one says what came.
    server.push(*[Reply([": nothing to say\n\n", DONE]) for _ in range(3)])
    with pytest.raises(ProviderError, match=r"ended the stream \(\[DONE\]\) without sending"):
        await collect(provider)
    assert len(server.requests) == 3


async def test_an_empty_body_is_not_a_reply(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(Reply([]), Reply([]), Reply([]))
    with pytest.raises(ProviderError, match="gave up after 3 attempts: the server answered 200 "):
        await collect(provider)


async def test_chunks_then_done_without_a_finish_reason_is_a_whole_reply(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    # A few servers never send a finish reason; their `[DONE]` still ends the reply.
    server.push(Reply([content("all "), content("there"), DONE]))
    message = await reply_of(provider)
    assert (message.text, message.finish_reason) == ("all there", "unknown")


async def test_data_after_done_is_ignored(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(Reply([content("kept"), DONE, content("ignored")]))
    assert (await reply_of(provider)).text == "kept"


async def test_error_object_mid_stream(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    error = {"error": {"message": "The model is overloaded, sorry", "type": "server_error"}}
    server.push(Reply([content("Partial"), sse(error), DONE]))
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="The model is overloaded, sorry"):
        async for event in provider.stream(
            ModelRequest("", [UserMessage("hi")]), AbortController().signal
        ):
            seen.append(event)
    assert seen == [TextChunk("Partial")]
    assert len(server.requests) == 1


async def test_error_event_with_plain_text_data(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    server.push(Reply(["event: error\ndata: upstream exploded\n\n"]))
    with pytest.raises(ProviderError, match="upstream exploded"):
        await collect(provider)


async def test_invalid_json_chunk_is_quoted(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    bad = '{"choices": [oops this is not json' + "x" * 500
    server.push(Reply([content("a"), f"data: {bad}\n\n", DONE]))
    with pytest.raises(ProviderError) as caught:
        await collect(provider)
    message = str(caught.value)
    assert "not valid JSON" in message
    assert '{"choices": [oops this is not json' in message
    assert len(message) < 400  # a prefix, not the whole 500-character chunk


async def test_server_that_ignores_stream_true(
    server: ScriptedServer, provider: OpenAICompatProvider
) -> None:
    completion = {
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "All at once.",
                    "tool_calls": [
                        {
                            "id": "t1",
                            "type": "function",
                            "function": {"name": "ls", "arguments": "{}"},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    server.push(Reply([json.dumps(completion)], headers={"Content-Type": "application/json"}))
    events = await collect(provider)
    assert events[0] == TextChunk("All at once.")
    assert isinstance(events[-1], ReplyDone)
    message = events[-1].message
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("t1", "ls", {})]
    assert (message.finish_reason, message.usage) == ("tool_calls", Usage(3, 4))


async def test_server_holding_the_stream_open_after_done_does_not_stall(
    server: ScriptedServer, provider: OpenAICompatProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After `[DONE]` the provider reads on briefly so the connection can be reused; a
    # server that never ends the body must not hold the reply back for long.
    monkeypatch.setattr(openai_body, "DRAIN_SECONDS", 0.05)
    gate = Gate()
    server.push(Reply([content("done"), DONE, gate]))
    started = time.monotonic()
    message = await reply_of(provider)
    assert message.text == "done"
    # Held, the reply would wait for the gate, opened only below: seconds, not the
    # drain's 50 ms, tell the two apart on a busy machine (0.58 s was seen under CI).
    assert time.monotonic() - started < 5
    gate.open()
