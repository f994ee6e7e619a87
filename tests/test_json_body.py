"""A request body sent piece by piece: the same bytes httpx's `json=` sends, framed with a
Content-Length, sendable again for a retry."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from ink_tui.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from ink_tui.core.provider_api import ModelRequest
from ink_tui.providers import anthropic_request, openai_request
from ink_tui.providers.json_body import CHUNK_BYTES, JsonBody


def _as_httpx_sends(obj: dict[str, Any]) -> bytes:
    return httpx.Request("POST", "http://127.0.0.1/", json=obj).content


def _history() -> list[Any]:
    big = 'x = 1  # ünïcödé ☃ "quoted" \\ back\n' * 5000
    return [
        UserMessage("read a.py, then ☃"),
        AssistantMessage(
            text="",
            tool_calls=[ToolCall("call_1", "read", {"path": "a.py"}, '{"path":"a.py"}')],
            finish_reason="tool_calls",
        ),
        ToolResultMessage("call_1", "read", big),
        AssistantMessage(text="Done.\n\n```py\nprint('é')\n```"),
        UserMessage("thanks"),
    ]


BODIES: list[dict[str, Any]] = [
    {},
    {"model": "m", "messages": []},
    {"a": [1, 2.5, None, True, "s", {"k": ["v"]}], "b": {"nested": "é\u2028"}, "c": "\x00"},
    openai_request.build_body(
        "gpt-x", ModelRequest(system_prompt="Be terse.", messages=_history(), max_output_tokens=9)
    ),
    anthropic_request.build_body(
        "claude-x", ModelRequest(system_prompt="Be terse.", messages=_history())
    ),
]


@pytest.mark.parametrize("obj", BODIES)
def test_same_bytes_and_length_as_httpx_json(obj: dict[str, Any]) -> None:
    expected = _as_httpx_sends(obj)
    body = JsonBody(obj)
    assert bytes(body) == expected
    assert len(body) == len(expected)
    assert body.headers() == {
        "Content-Type": "application/json",
        "Content-Length": str(len(expected)),
    }
    assert json.loads(bytes(body)) == obj


def test_chunks_are_bounded_by_the_biggest_element() -> None:
    obj = {"messages": [{"content": "y" * 1000} for _ in range(500)]}
    chunks = list(JsonBody(obj).chunks())
    assert len(chunks) > 1
    assert all(len(chunk) < CHUNK_BYTES + 1100 for chunk in chunks)


def test_nan_is_refused_as_with_json() -> None:
    with pytest.raises(ValueError):
        len(JsonBody({"messages": [float("nan")]}))


async def test_sent_twice_with_content_length_not_chunked() -> None:
    obj = openai_request.build_body("gpt-x", ModelRequest(system_prompt="", messages=_history()))
    received: list[tuple[httpx.Headers, bytes]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        received.append((request.headers, request.content))
        return httpx.Response(200, json={})

    body = JsonBody(obj)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        for _ in range(2):
            request = client.build_request(
                "POST", "http://127.0.0.1/v1/chat/completions", content=body, headers=body.headers()
            )
            await client.send(request)
    expected = _as_httpx_sends(obj)
    assert len(received) == 2
    for headers, content in received:
        assert content == expected
        assert headers["content-length"] == str(len(expected))
        assert "transfer-encoding" not in headers
        assert headers["content-type"] == "application/json"


def test_sending_holds_no_copy_of_the_whole_body() -> None:
    import tracemalloc

    obj = {"messages": [{"role": "tool", "content": f"{n} " * 10_000} for n in range(200)]}
    body = JsonBody(obj)
    tracemalloc.start()
    try:
        sent = len(body) + sum(len(chunk) for chunk in body.chunks())
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sent > 8_000_000
    # httpx's json= held the body as a str and as bytes at once: twice its size.
    assert peak - held < 1_000_000
