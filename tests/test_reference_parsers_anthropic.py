"""ink's Anthropic provider against the official `anthropic` SDK as a reference parser.

Two sources of streams, each sent by a real loopback server twice: to ink's provider and
to the SDK's `client.messages.stream(...)`, whose accumulator builds the final message.

- Hypothesis writes whole Messages API streams: signed thinking, text, several tool_use
  blocks whose input JSON is cut at arbitrary points, pings anywhere, usage with cache
  counts, a stop reason; the body is cut into network writes at arbitrary bytes.
- The recorded streams the SDK's source package ships for its own tests
  (tests/fixtures/anthropic_streams/, see the README there).

Both parsers must assemble the same text, thinking (with signatures), tool calls (ids,
names, parsed input), usage and stop reason. Where they part by design (a truncated or
invalid tool input: the SDK guesses a partial object or raises, ink keeps the raw text and
refuses to run the call), the test says so. The SDK is a test-only dependency.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from hypothesis import given

from ink_tui.core.messages import AssistantMessage
from ink_tui.providers.anthropic import AnthropicProvider
from tests.reference_helpers import REFERENCE, final_message, serving
from tests.scripted_anthropic_server import ScriptedAnthropicServer
from tests.scripted_server import Reply, Step
from tests.stream_strategies import ReplyPlan, anthropic_reply, reply_plans

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic_streams"

# What ink calls each stop reason the API documents.
_INK_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
PLANS = reply_plans(
    stops=("end_turn", "stop_sequence", "max_tokens", "refusal", "model_context_window_exceeded"),
    tool_stops=("tool_use", "max_tokens"),
)


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedAnthropicServer]:
    yield from serving(ScriptedAnthropicServer)


@pytest.fixture(scope="module")
def sdk(server: ScriptedAnthropicServer) -> Iterator[anthropic.Anthropic]:
    client = anthropic.Anthropic(base_url=server.base_url, api_key="sk-ant-test", max_retries=0)
    try:
        yield client
    finally:
        client.close()


def ink_parse(server: ScriptedAnthropicServer) -> AssistantMessage:
    return final_message(
        lambda: AnthropicProvider(server.base_url, "claude-ref", "sk-ant-test", max_attempts=1)
    )


def sdk_parse(sdk: anthropic.Anthropic) -> Any:
    with sdk.messages.stream(
        model="claude-ref", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        return stream.get_final_message()


def assert_same(ink: AssistantMessage, reference: Any) -> None:
    blocks = reference.content
    assert ink.text == "".join(b.text for b in blocks if b.type == "text")
    thinking = [(b.thinking, b.signature) for b in blocks if b.type == "thinking"]
    assert [(b.text, b.signature) for b in ink.thinking_blocks if not b.redacted] == thinking
    # Redacted thinking is kept, in order, to be sent back as it came.
    kept = [
        ("redacted", b.data) if b.type == "redacted_thinking" else ("thinking", b.thinking)
        for b in blocks
        if b.type in ("thinking", "redacted_thinking")
    ]
    assert [("redacted" if b.redacted else "thinking", b.text) for b in ink.thinking_blocks] == kept
    assert ink.thinking == "\n\n".join(text for text, _ in thinking if text)
    uses = [b for b in blocks if b.type == "tool_use"]
    assert [(c.id, c.name, c.arguments) for c in ink.tool_calls] == [
        (b.id, b.name, b.input) for b in uses
    ]
    assert all(c.arguments_error is None for c in ink.tool_calls)
    assert ink.finish_reason == _INK_STOP[reference.stop_reason]
    usage = reference.usage
    read = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    assert ink.usage.input_tokens == usage.input_tokens + read + written
    assert ink.usage.output_tokens == usage.output_tokens
    assert ink.usage.cached_tokens == read


@REFERENCE
@given(plan=PLANS)
def test_generated_streams_parse_as_the_sdk_parses_them(
    server: ScriptedAnthropicServer, sdk: anthropic.Anthropic, plan: ReplyPlan
) -> None:
    reply = anthropic_reply(plan)
    server.push(reply, reply)
    ink = ink_parse(server)
    reference = sdk_parse(sdk)
    assert_same(ink, reference)
    # And both are what the model said.
    assert ink.text == plan.text_value
    assert [(c.id, c.name, c.arguments) for c in ink.tool_calls] == [
        (c.id, c.name, c.arguments) for c in plan.calls
    ]
    assert ink.usage.output_tokens == plan.output_tokens


def recorded(name: str) -> Reply:
    """A recorded stream sent line by line, as the SDK's own tests send it."""
    lines = (FIXTURES / name).read_text().splitlines()
    steps: list[Step] = [line + "\n" for line in lines]
    return Reply(steps)


@pytest.mark.parametrize(
    "name",
    [
        "basic_response.txt",
        "tool_use_response.txt",
        "unknown_events_response.txt",
        "refusal_response.txt",
        "message_delta_fields_response.txt",
        "message_delta_omitted_usage_response.txt",
        "server_tool_use_response.txt",
        "fallback_response.txt",
    ],
)
def test_recorded_streams_parse_as_the_sdk_parses_them(
    server: ScriptedAnthropicServer, sdk: anthropic.Anthropic, name: str
) -> None:
    server.push(recorded(name), recorded(name))
    ink = ink_parse(server)
    reference = sdk_parse(sdk)
    assert_same(ink, reference)
    assert ink.model == reference.model
    assert ink.text or ink.finish_reason == "content_filter"


def test_recorded_tool_use_keeps_the_call_as_the_sdk_does(
    server: ScriptedAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    server.push(recorded("tool_use_response.txt"), recorded("tool_use_response.txt"))
    ink = ink_parse(server)
    reference = sdk_parse(sdk)
    assert_same(ink, reference)
    assert [c.name for c in ink.tool_calls] == ["get_weather"]
    assert ink.tool_calls[0].arguments == {"location": "Paris"}


def test_truncated_tool_input_is_refused_where_the_sdk_guesses(
    server: ScriptedAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    """A reply cut by max_tokens mid-input: the SDK's partial JSON parser returns the
    object so far (an unfinished string dropped); ink keeps the exact text sent and marks
    the call unparsable, so a truncated command is never run as if it were whole."""
    name = "incomplete_partial_json_response.txt"
    server.push(recorded(name), recorded(name))
    ink = ink_parse(server)
    reference = sdk_parse(sdk)
    uses = [b for b in reference.content if b.type == "tool_use"]
    assert [(c.id, c.name) for c in ink.tool_calls] == [(b.id, b.name) for b in uses]
    assert ink.finish_reason == _INK_STOP[reference.stop_reason] == "length"
    assert ink.text == "".join(b.text for b in reference.content if b.type == "text")
    call = ink.tool_calls[0]
    assert call.arguments == {} and call.arguments_error is not None
    assert call.raw_arguments.startswith('{"filename": "taxes.txt", "lines_of_text": [')
    assert uses[0].input["filename"] == "taxes.txt"  # the SDK's guess


def test_invalid_tool_input_is_refused_by_both(
    server: ScriptedAnthropicServer, sdk: anthropic.Anthropic
) -> None:
    """Input that is not JSON: the SDK's stream raises; ink finishes the reply and marks
    the call, with the text as sent, so the model is told and may try again."""
    name = "tool_use_invalid_json_response.txt"
    server.push(recorded(name), recorded(name))
    ink = ink_parse(server)
    with pytest.raises(ValueError, match="Unable to parse tool parameter JSON"):
        sdk_parse(sdk)
    assert len(ink.tool_calls) == 1
    call = ink.tool_calls[0]
    assert call.arguments == {} and call.arguments_error is not None
    assert "invalid JSON" in call.arguments_error
