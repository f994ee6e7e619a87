"""ink's OpenAI-compatible provider against the official `openai` SDK as a reference parser.

Hypothesis writes whole chat-completion streams (reasoning, text, several parallel tool
calls whose argument JSON is cut at arbitrary points and interleaved, usage, a stop
reason), cut into network writes at arbitrary bytes, and a real loopback server sends
each one twice: to ink's provider and to the SDK's `client.chat.completions.stream(...)`,
whose `ChatCompletionStreamState` accumulates the chunks. Both must assemble the same
text, reasoning, tool calls (index order, ids, names, parsed arguments), usage and stop
reason. The SDK is a test-only dependency; ink itself never imports it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from hypothesis import given

from ink_tui.core.messages import AssistantMessage
from ink_tui.providers.openai_compat import OpenAICompatProvider
from tests.reference_helpers import REFERENCE, final_message, serving
from tests.scripted_server import ScriptedServer
from tests.stream_strategies import ReplyPlan, openai_reply, reply_plans

# What ink calls each finish reason. A reply with tool calls that says "stop" is a tool
# call to ink (several servers say so); the SDK reports the word as sent.
_INK_STOP = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
}
PLANS = reply_plans(
    stops=("stop", "length", "content_filter"), tool_stops=("tool_calls", "stop", "length")
)


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    yield from serving(ScriptedServer)


@pytest.fixture(scope="module")
def sdk(server: ScriptedServer) -> Iterator[openai.OpenAI]:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    try:
        yield client
    finally:
        client.close()


def ink_parse(server: ScriptedServer) -> AssistantMessage:
    return final_message(
        lambda: OpenAICompatProvider(server.base_url, "ref-model", "sk-test", max_attempts=1)
    )


def sdk_parse(sdk: openai.OpenAI) -> Any:
    with sdk.chat.completions.stream(
        model="ref-model",
        messages=[{"role": "user", "content": "hi"}],
        stream_options={"include_usage": True},
    ) as stream:
        for _event in stream:
            pass
        # The snapshot, not `get_final_completion()`: that one raises for a reply cut by
        # "length" or "content_filter", which ink takes as an answer with that reason.
        return stream.current_completion_snapshot


def assert_same(ink: AssistantMessage, reference: Any, plan: ReplyPlan) -> None:
    choice = reference.choices[0]
    message = choice.message
    assert ink.text == (message.content or "") == plan.text_value
    # The SDK has no field for reasoning; it accumulates the unknown key as sent.
    reasoning = (message.model_extra or {}).get("reasoning_content") or ""
    assert ink.thinking == reasoning == plan.thinking_value
    calls = message.tool_calls or []
    assert [(c.id, c.name) for c in ink.tool_calls] == [(c.id, c.function.name) for c in calls]
    assert [c.raw_arguments for c in ink.tool_calls] == [c.function.arguments for c in calls]
    assert [c.arguments for c in ink.tool_calls] == [
        json.loads(c.function.arguments) for c in calls
    ]
    assert all(c.arguments_error is None for c in ink.tool_calls)
    expected = _INK_STOP[choice.finish_reason]
    if calls and expected == "stop":
        expected = "tool_calls"
    assert ink.finish_reason == expected
    assert ink.usage.input_tokens == reference.usage.prompt_tokens == plan.input_tokens
    assert ink.usage.output_tokens == reference.usage.completion_tokens == plan.output_tokens


@REFERENCE
@given(plan=PLANS)
def test_generated_streams_parse_as_the_sdk_parses_them(
    server: ScriptedServer, sdk: openai.OpenAI, plan: ReplyPlan
) -> None:
    reply = openai_reply(plan)
    server.push(reply, reply)
    ink = ink_parse(server)
    reference = sdk_parse(sdk)
    assert_same(ink, reference, plan)
    assert [c.name for c in ink.tool_calls] == [c.name for c in plan.calls]
    assert [c.arguments for c in ink.tool_calls] == [c.arguments for c in plan.calls]
