"""What the provider sends: the request body, headers and model discovery."""

from __future__ import annotations

from ink_tui.core.abort import AbortController
from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from ink_tui.core.provider_api import ModelRequest, ReplyDone
from ink_tui.core.tool_api import ToolSpec
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.scripted_server import ScriptedServer, text_reply

READ_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
}


async def run(provider: OpenAICompatProvider, request: ModelRequest) -> ReplyDone:
    try:
        events = [event async for event in provider.stream(request, AbortController().signal)]
    finally:
        await provider.aclose()
    assert isinstance(events[-1], ReplyDone)
    return events[-1]


async def test_body_shape_with_history_tools_and_limits(server: ScriptedServer) -> None:
    server.push(text_reply("ok"))
    request = ModelRequest(
        system_prompt="You are terse.",
        messages=[
            UserMessage("read a.py"),
            AssistantMessage(
                text="Reading it.",
                thinking="secret thoughts",
                tool_calls=[ToolCall("call_1", "read", {"path": "a.py"}, '{"path":"a.py"}')],
            ),
            ToolResultMessage("call_1", "read", "print('a')"),
            AssistantMessage(
                tool_calls=[
                    ToolCall("call_2", "read", {"path": "b.py"}),
                    ToolCall("call_3", "read", {}, "{oops", arguments_error="invalid JSON"),
                ]
            ),
            ToolResultMessage("call_2", "read", "no such file", is_error=True),
            ToolResultMessage("call_3", "read", "bad arguments", is_error=True),
            AssistantMessage(text="Done."),
            UserMessage("thanks", kind="follow_up"),
        ],
        tools=[ToolSpec("read", "Read a file.", READ_SCHEMA)],
        max_output_tokens=1234,
    )
    provider = OpenAICompatProvider(server.base_url + "/", "my-model", "sk-secret")
    await run(provider, request)

    [body] = server.requests
    assert body["model"] == "my-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 1234
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read", "description": "Read a file.", "parameters": READ_SCHEMA},
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "read a.py"},
        {
            "role": "assistant",
            "content": "Reading it.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    # The raw text as the model sent it, not a re-serialisation.
                    "function": {"name": "read", "arguments": '{"path":"a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "print('a')"},
        {
            "role": "assistant",
            # Not null: llama-cpp-python's server refuses that (HTTP 500).
            "content": "",
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "b.py"}'},
                },
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "read", "arguments": "{oops"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "no such file"},
        {"role": "tool", "tool_call_id": "call_3", "content": "bad arguments"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "thanks"},
    ]


async def test_minimal_body_has_no_tools_or_limit(server: ScriptedServer) -> None:
    server.push(text_reply("ok"))
    await run(
        OpenAICompatProvider(server.base_url, "m", None),
        ModelRequest("", [UserMessage("hi")]),
    )
    [body] = server.requests
    assert "tools" not in body
    assert "max_tokens" not in body
    # An empty system prompt is left out rather than sent as an empty message.
    assert body["messages"] == [{"role": "user", "content": "hi"}]


async def test_authorization_header_only_with_a_key(server: ScriptedServer) -> None:
    server.push(text_reply("one"), text_reply("two"))
    request = ModelRequest("s", [UserMessage("hi")])
    await run(OpenAICompatProvider(server.base_url, "m", "sk-abc123"), request)
    await run(OpenAICompatProvider(server.base_url, "m", None), request)
    with_key, without_key = ({k.lower(): v for k, v in h.items()} for h in server.request_headers)
    assert with_key["authorization"] == "Bearer sk-abc123"
    assert "authorization" not in without_key
    assert with_key["content-type"] == "application/json"


async def test_model_discovered_from_models_endpoint(server: ScriptedServer) -> None:
    server.push(text_reply("first"), text_reply("second"))
    provider = OpenAICompatProvider(server.base_url, None, "k")
    assert provider.model == ""
    assert provider.name == "openai-compatible"
    assert provider.is_demo is False
    request = ModelRequest("s", [UserMessage("hi")])
    events = [event async for event in provider.stream(request, AbortController().signal)]
    assert provider.model == "scripted-model"
    assert isinstance(events[-1], ReplyDone)
    assert events[-1].message.model == "scripted-model"
    await run(provider, request)
    assert [body["model"] for body in server.requests] == ["scripted-model", "scripted-model"]


async def test_explicit_model_skips_discovery(server: ScriptedServer) -> None:
    provider = OpenAICompatProvider(server.base_url, "chosen", None)
    try:
        assert await provider.resolve_model() == "chosen"
    finally:
        await provider.aclose()
