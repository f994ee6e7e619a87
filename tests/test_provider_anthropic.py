"""The native Anthropic provider against a scripted Messages API server: what it shows,
what it assembles, and the exact shape of what it sends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from ink_tui.core.abort import AbortController
from ink_tui.core.messages import (
    AssistantMessage,
    Message,
    ThinkingBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ink_tui.core.provider_api import (
    ModelRequest,
    ReplyDone,
    StreamEvent,
    TextChunk,
    ThinkingChunk,
)
from ink_tui.core.tool_api import ToolSpec
from ink_tui.providers.anthropic import AnthropicProvider
from tests.scripted_anthropic_server import (
    SIGNATURE,
    ScriptedAnthropicServer,
    text_reply,
    tool_reply,
)

TOOLS = [
    ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {}}}),
    ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {}}}),
]


@pytest.fixture
def anthropic() -> Iterator[ScriptedAnthropicServer]:
    server = ScriptedAnthropicServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def provider(anthropic: ScriptedAnthropicServer) -> AsyncIterator[AnthropicProvider]:
    client = AnthropicProvider(anthropic.base_url, "claude-test", "sk-ant-test")
    yield client
    await client.aclose()


async def run(
    provider: AnthropicProvider, messages: list[Message], tools: list[ToolSpec] | None = None
) -> tuple[list[StreamEvent], AssistantMessage]:
    request = ModelRequest("You are a test.", messages, tools or [])
    events = [event async for event in provider.stream(request, AbortController().signal)]
    done = events[-1]
    assert isinstance(done, ReplyDone)
    return events, done.message


async def test_text_streams_in_pieces_and_assembles(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(text_reply("Hello from Claude."))
    events, message = await run(provider, [UserMessage("hi")])
    shown = "".join(e.text for e in events if isinstance(e, TextChunk))
    assert shown == message.text == "Hello from Claude."
    assert message.finish_reason == "stop"
    assert message.model == "claude-test"
    assert message.usage.output_tokens == 12
    # The request: the Messages endpoint, Anthropic's headers, a streamed body.
    headers = {k.lower(): v for k, v in anthropic.request_headers[0].items()}
    assert headers["x-api-key"] == "sk-ant-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers
    body = anthropic.requests[0]
    assert body["model"] == "claude-test" and body["stream"] is True
    assert body["max_tokens"] > 0
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPH}]}
    ]


EPH = {"type": "ephemeral"}


async def test_thinking_is_shown_and_its_signature_is_sent_back(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    provider.thinking_budget = 2048
    anthropic.push(
        tool_reply([("read", {"path": "a.py"}, "toolu_1")], thinking="Let me read a.py first."),
        text_reply("Done."),
    )
    events, first = await run(provider, [UserMessage("look")], TOOLS)
    thought = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thought == first.thinking == "Let me read a.py first."
    assert first.thinking_blocks == [ThinkingBlock("Let me read a.py first.", SIGNATURE)]
    assert first.finish_reason == "tool_calls"
    body = anthropic.requests[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048
    history: list[Message] = [
        UserMessage("look"),
        first,
        ToolResultMessage("toolu_1", "read", "print(1)"),
    ]
    await run(provider, history, TOOLS)
    assistant = anthropic.requests[1]["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me read a.py first.", "signature": SIGNATURE},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
        ],
    }
    assert anthropic.requests[1]["thinking"]["budget_tokens"] == 2048


async def test_parallel_tool_calls_from_json_in_pieces(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    calls = [
        ("read", {"path": "src/app.py", "limit": 40}, "toolu_a"),
        ("bash", {"command": "pytest -q tests/test_x.py"}, "toolu_b"),
        ("read", {}, "toolu_c"),
    ]
    anthropic.push(tool_reply(calls, text="Reading two things."))
    events, message = await run(provider, [UserMessage("go")], TOOLS)
    assert message.text == "Reading two things."
    assert [(c.name, c.arguments, c.id) for c in message.tool_calls] == calls
    assert all(c.arguments_error is None for c in message.tool_calls)
    assert message.finish_reason == "tool_calls"
    # How many text chunks depends on how the deltas meet the reads; the tool JSON
    # must never be shown as text.
    *chunks, done = events
    assert isinstance(done, ReplyDone)
    assert all(isinstance(e, TextChunk) for e in chunks)
    assert "".join(e.text for e in chunks if isinstance(e, TextChunk)) == "Reading two things."


async def test_cache_usage_is_read_back(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(text_reply("cached", cache_read=3000, cache_write=500))
    _, message = await run(provider, [UserMessage("hi")])
    assert message.usage.cached_tokens == 3000
    # The prompt is all of it: uncached, read from the cache and written to it.
    assert message.usage.input_tokens == 25 + 3000 + 500
    assert message.usage.output_tokens == 12


async def test_request_shape_caching_tools_and_merged_results(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(text_reply("ok"))
    calls = [
        ToolCall("toolu_a", "read", {"path": "a"}),
        ToolCall("toolu_b", "bash", {"command": "ls"}),
    ]
    history: list[Message] = [
        UserMessage("first question"),
        AssistantMessage(text="Looking.", tool_calls=calls, finish_reason="tool_calls"),
        ToolResultMessage("toolu_a", "read", "A"),
        ToolResultMessage("toolu_b", "bash", "no such dir", is_error=True),
        UserMessage("and also this", kind="steer"),
    ]
    await run(provider, history, TOOLS)
    body = anthropic.requests[0]
    assert body["system"] == [{"type": "text", "text": "You are a test.", "cache_control": EPH}]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": TOOLS[0].parameters},
        {
            "name": "bash",
            "description": "Run a command",
            "input_schema": TOOLS[1].parameters,
            "cache_control": EPH,
        },
    ]
    assert "thinking" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first question", "cache_control": EPH}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {"command": "ls"}},
            ],
        },
        {
            # Both results and the steer after them: one user turn, results first.
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": "no such dir",
                    "is_error": True,
                },
                {"type": "text", "text": "and also this", "cache_control": EPH},
            ],
        },
    ]
    marks = str(body).count("cache_control")
    assert marks == 4


async def test_no_more_than_four_cache_breakpoints_in_a_long_session(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    anthropic.push(text_reply("ok"))
    history: list[Message] = []
    for turn in range(6):
        history += [UserMessage(f"q{turn}"), AssistantMessage(text=f"a{turn}")]
    history.append(UserMessage("last"))
    await run(provider, history, TOOLS)
    body = anthropic.requests[0]
    assert str(body).count("cache_control") == 4
    marked = [
        m["content"][-1]["text"] for m in body["messages"] if "cache_control" in m["content"][-1]
    ]
    assert marked == ["q5", "last"]


async def test_thinking_stays_off_after_a_tool_call_made_without_it(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    # The API refuses thinking when the tool call it continues has no signed thinking.
    provider.thinking_budget = 4000
    anthropic.push(text_reply("ok"), text_reply("ok"))
    unsigned = AssistantMessage(
        thinking="cut short",
        thinking_blocks=[ThinkingBlock("cut short")],
        tool_calls=[ToolCall("toolu_1", "read", {"path": "a"})],
        finish_reason="tool_calls",
    )
    history: list[Message] = [UserMessage("q"), unsigned, ToolResultMessage("toolu_1", "read", "")]
    await run(provider, history, TOOLS)
    body = anthropic.requests[0]
    assert "thinking" not in body
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}}
    ]
    # A new prompt starts a new turn: thinking is on again.
    await run(provider, [*history, AssistantMessage(text="fine"), UserMessage("next")], TOOLS)
    assert anthropic.requests[1]["thinking"] == {"type": "enabled", "budget_tokens": 4000}


async def test_a_whole_message_sent_as_json_is_taken(
    anthropic: ScriptedAnthropicServer, provider: AnthropicProvider
) -> None:
    import json

    from tests.scripted_server import Reply

    message = {
        "type": "message",
        "model": "claude-test",
        "content": [
            {"type": "text", "text": "All at once."},
            {"type": "tool_use", "id": "toolu_9", "name": "read", "input": {"path": "x"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 9, "output_tokens": 3},
    }
    anthropic.push(Reply([json.dumps(message)], headers={"Content-Type": "application/json"}))
    _, reply = await run(provider, [UserMessage("hi")], TOOLS)
    assert reply.text == "All at once."
    assert [(c.id, c.arguments) for c in reply.tool_calls] == [("toolu_9", {"path": "x"})]
    assert reply.finish_reason == "tool_calls"
